// Types of what eslint.config.js exports besides the config (test/deploy/import-boundaries).
import type { Linter } from 'eslint';

/** src folder → the other src folders it may import (docs/design.md §Parts). */
export const parts: Record<string, string[]>;
/** The config block that applies the import boundaries to src/. */
export const boundaryConfig: Linter.Config;
declare const config: Linter.Config[];
export default config;
