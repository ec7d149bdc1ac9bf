// The process kubelet's image table: what an image runs, and what it offers `kubectl exec`.

/** What an image runs: `command args… <container command> <container args>`. */
export interface ImageCommand {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  /**
   * The programs the image provides, by name (the command's first word or its base name, e.g.
   * `localnet-cli`), for `kubectl exec`; other names are looked up on the container's PATH.
   */
  binaries?: Record<string, ExecProgram>;
}

/** A program an image provides to `kubectl exec`; `$(VAR)` in `env` values is the container's. */
export interface ExecProgram {
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

/** Where `kubectl exec` runs a command in a container: its env, its folder, its image. */
export interface ExecTarget {
  env: Record<string, string>;
  cwd: string;
  image: ImageCommand | undefined;
}
