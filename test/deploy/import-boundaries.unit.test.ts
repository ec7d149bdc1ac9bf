// docs/design.md §Parts is an allow-list in lint (eslint.config.js → scripts/eslint-import-
// boundaries.js): these lint sources at paths under src/ with the project's own boundary config,
// so a folder nobody declared, or a part reaching past its row, fails `npm run lint`.
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { boundaryConfig, parts } from '../../eslint.config.js';

const eslint = new ESLint({
  cwd: process.cwd(),
  overrideConfigFile: true,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
    boundaryConfig,
  ],
});

async function problems(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path });
  return (result?.messages ?? []).map((m) => m.message);
}

describe('import boundaries (docs/design.md §Parts)', () => {
  it('a file in a folder nobody declared may import nothing of ours', async () => {
    const found = await problems(
      'src/newfolder/thing.ts',
      "import type { ValidatorId } from '../manager/model.ts';\nexport type X = ValidatorId;\n",
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/src\/newfolder\/ is not a declared part/);
    // …while what is not ours (node:, packages) stays free.
    expect(
      await problems(
        'src/newfolder/thing.ts',
        "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
      ),
    ).toEqual([]);
  });

  it('a declared part imports only what its row allows', async () => {
    expect(await problems('src/pocket/x.ts', "export * from '../manager/model.ts';\n")).toEqual([
      expect.stringMatching(/src\/pocket\/ may not import src\/manager\//),
    ]);
    expect(
      await problems('src/manager/x.ts', "export * from '../kube-emulator/index.ts';\n"),
    ).toEqual([expect.stringMatching(/src\/manager\/ may not import src\/kube-emulator\//)]);
    expect(await problems('src/devnet/x.ts', "export * from '../manager/model.ts';\n")).toEqual([]);
    // Dynamic imports count too.
    expect(
      await problems('src/cli/x.ts', "export const m = () => import('../manager/run.ts');\n"),
    ).toHaveLength(1);
  });

  it('the readers (scaler, status, control plane) never import the Manager', async () => {
    const manager = "import type { Manager } from '../manager.ts';\nexport type M = Manager;\n";
    for (const path of ['src/manager/scale/x.ts', 'src/manager/rpc/x.ts'])
      expect(await problems(path, manager)).toEqual([
        expect.stringMatching(/readers take the read model/),
      ]);
    expect(
      await problems(
        'src/manager/status.ts',
        "import type { Manager } from './manager.ts';\nexport type M = Manager;\n",
      ),
    ).toEqual([expect.stringMatching(/readers take the read model/)]);
    expect(
      await problems(
        'src/manager/scale/x.ts',
        "import type { ReadModel } from '../read-model.ts';\nexport type R = ReadModel;\n",
      ),
    ).toEqual([]);
  });

  it('the planner imports only the model and errors', async () => {
    expect(await problems('src/manager/planner/x.ts', "export * from '../config.ts';\n")).toEqual([
      expect.stringMatching(/the planner is a pure function/),
    ]);
    expect(
      await problems(
        'src/manager/planner/x.ts',
        "export * from '../model.ts';\nexport * from '../errors.ts';\nexport * from './voting.ts';\n",
      ),
    ).toEqual([]);
  });

  it('only the Pocket side of the chain port imports the protocol library', async () => {
    expect(
      await problems('src/manager/reconcile/x.ts', "export * from '../../pocket/index.ts';\n"),
    ).toEqual([expect.stringMatching(/only the Pocket side of the chain port/)]);
    expect(
      await problems(
        'src/manager/chain/pocket/x.ts',
        "export * from '../../../pocket/index.ts';\n",
      ),
    ).toEqual([]);
  });

  it('every folder of src/ is declared', async () => {
    const { readdirSync } = await import('node:fs');
    const folders = readdirSync('src', { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => !(f in parts))).toEqual([]);
  });
});
