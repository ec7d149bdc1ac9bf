// The Tiltfile, without Tilt: it refers only to files that exist and to the debug CLI's real
// commands, and run under Python with stand-ins for Tilt's builtins (support/tilt_stub.py) it
// declares the expected resources, rejects bad settings early, and its buttons' shell scripts
// call the CLI with the right arguments.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../support/run-bin.ts';
import {
  findObject,
  kubectlPath,
  kustomizeBuild,
  readRepoFile,
  repoRoot,
  stringData,
  type KubeObject,
} from './support/manifests.ts';
import { noKubectl, withKubectl } from '../support/kubectl-gate.ts';

const tiltfile = readRepoFile('Tiltfile');
/** The Tiltfile without comments, so that prose is not read as code. */
const code = tiltfile
  .split('\n')
  .filter((line) => !line.trimStart().startsWith('#'))
  .join('\n');

/** Tilt's config.define_* functions (internal/tiltfile/config); there is no define_int. */
const TILT_CONFIG_DEFINES = new Set(['string', 'string_list', 'bool', 'object']);

async function registeredCommands(): Promise<Set<string>> {
  const help = await runBin('cluster-manager', ['--help']);
  const section = help.stdout.split(/^Commands:$/m)[1] ?? '';
  return new Set([...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!));
}

/** The flags `cluster-manager scale` accepts, from its own --help (global ones included). */
async function scaleFlags(): Promise<Set<string>> {
  const help = await runBin('cluster-manager', ['scale', '--help']);
  return new Set([...help.stdout.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/gm)].map((m) => m[1]!));
}

const python = spawnSync('python3', ['-c', 'import yaml'], { encoding: 'utf8' }).status === 0;

interface TiltRecord {
  failed: string | null;
  version_settings: { constraint: string } | null;
  allowed_contexts: string[];
  config_defined: { kind: string; name: string }[];
  docker_builds: {
    ref: string;
    target?: string;
    build_args?: Record<string, string>;
    live_update?: { sync: string[] }[];
    ignore?: string[];
    only?: string[];
  }[];
  resources: {
    workload: string;
    labels?: string[];
    resource_deps?: string[];
    objects?: string[];
    port_forwards?: { local: number; container: number }[];
    trigger_mode?: string;
  }[];
  local_resources: { name: string; cmd: string[]; labels?: string[] }[];
  buttons: { name: string; resource: string; argv: string[]; text: string }[];
  local: string[][];
  yaml: KubeObject[];
}

const scratch = mkdtempSync(join(tmpdir(), 'cm-tiltfile-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** The dev overlay built once by kubectl 1.32, handed to every run of the Tiltfile. */
const devBuild = join(scratch, 'dev.yaml');
if (!noKubectl)
  writeFileSync(
    devBuild,
    execFileSync(kubectlPath(), ['kustomize', join(repoRoot, 'k8s/overlays/dev')], {
      encoding: 'utf8',
    }),
  );

function runTiltfile(options: {
  args?: Record<string, string>;
  context?: string;
  localOutput?: string;
}): TiltRecord {
  const request = {
    args: options.args ?? {},
    context: options.context ?? 'kind-kind',
    namespace: 'localnet',
    kubectl: kubectlPath(),
    kustomize_output: { 'k8s/overlays/dev': devBuild },
    local_output: options.localOutput ?? '{"genesis": "stub"}',
  };
  const out = execFileSync(
    'python3',
    [join(repoRoot, 'test/deploy/support/tilt_stub.py'), JSON.stringify(request)],
    { encoding: 'utf8', timeout: 30_000 },
  );
  return JSON.parse(out) as TiltRecord;
}

describe('the Tiltfile as text', () => {
  it('refers only to repo paths that exist', () => {
    const literals = [...code.matchAll(/'([^'\n]+)'/g)].map((m) => m[1]!);
    const paths = literals.filter((s) =>
      /^(k8s|src|scripts|test|docs|node_modules)(\/|$)|^Dockerfile$/.test(s),
    );
    expect(paths.length).toBeGreaterThan(8);
    expect(paths.filter((p) => !existsSync(join(repoRoot, p)))).toEqual([]);
  });

  it("calls only the debug CLI's real commands, with flags `scale` accepts", async () => {
    const registered = await registeredCommands();
    const accepted = await scaleFlags();
    expect(registered.has('run')).toBe(true);
    const used = [...code.matchAll(/\bcluster_manager\s+([a-z][a-z-]*)/g)].map((m) => m[1]!);
    expect(new Set(used)).toEqual(new Set(['scale', 'trigger-view', 'status']));
    for (const command of used) expect(registered.has(command), command).toBe(true);
    const usedFlags = [...code.matchAll(/cluster_manager scale [^\n']*/g)].flatMap((m) =>
      [...m[0].matchAll(/--[a-z-]+/g)].map((f) => f[0]),
    );
    expect(usedFlags.length).toBeGreaterThan(0);
    for (const flag of usedFlags) expect(accepted.has(flag), flag).toBe(true);
    for (const [, value] of code.matchAll(/--wait (\S+)/g))
      expect(['none', 'staked', 'active']).toContain(value);
    for (const flag of ['--drive', '--wait', '--timeout'])
      expect(code.includes(`'${flag}`) || code.includes(` ${flag}`)).toBe(true);
  });

  it('opens with version_settings and loads the uibutton extension', () => {
    expect(code.trimStart().startsWith('version_settings(')).toBe(true);
    expect(code).toContain("load('ext://uibutton', 'cmd_button', 'location')");
  });

  it('uses only config.define_* functions that Tilt has', () => {
    const kinds = [...code.matchAll(/config\.define_([a-z_]+)\(/g)].map((m) => m[1]!);
    expect(kinds.length).toBeGreaterThan(0);
    for (const kind of kinds) expect(TILT_CONFIG_DEFINES.has(kind), kind).toBe(true);
  });

  it.skipIf(noKubectl)('forwards the ports the manifests serve on', () => {
    const objects = kustomizeBuild('k8s/overlays/dev');
    const config = stringData(findObject(objects, 'ConfigMap', 'cluster-manager-config'));
    expect(code).toContain(`_MANAGER_PORT = ${config.CM_RPC_PORT}`);
    expect(code).toContain('_NODE_RPC_PORT = 50832');
  });

  it.skipIf(!python)('parses as Python (a syntax check of the Starlark)', () => {
    execFileSync('python3', [
      '-c',
      'import ast,sys; ast.parse(open(sys.argv[1]).read())',
      join(repoRoot, 'Tiltfile'),
    ]);
  });
});

describe.skipIf(!python || noKubectl)('the Tiltfile run with stand-ins for Tilt', () => {
  const plain = withKubectl(() => runTiltfile({}));

  it.skipIf(noKubectl)(
    'deploys the dev overlay with 4 validators and an automatic pacemaker by default',
    () => {
      expect(plain.failed).toBeNull();
      expect(plain.version_settings?.constraint).toMatch(/^>=0\.\d+/);
      expect(plain.allowed_contexts).toEqual(['kind-kind']);
      const validators = findObject(plain.yaml, 'StatefulSet', 'validator');
      expect((validators.spec as { replicas: number }).replicas).toBe(4);
      const built = findObject(
        kustomizeBuild('k8s/overlays/dev'),
        'ConfigMap',
        'v1-localnet-genesis',
      );
      expect(findObject(plain.yaml, 'ConfigMap', 'v1-localnet-genesis').metadata.name).toBe(
        built.metadata.name,
      );
      expect(plain.local).toEqual([]);
      const args = (validators.spec as { template: { spec: { containers: { args: string[] }[] } } })
        .template.spec.containers[0]!.args;
      expect(args[args.indexOf('--pacemaker') + 1]).toBe('auto');
    },
  );

  it('builds both images from the Dockerfile, live-updating the manager', () => {
    const stages = [...readRepoFile('Dockerfile').matchAll(/^FROM \S+ AS (\S+)$/gm)].map(
      (m) => m[1],
    );
    const images = plain.yaml.flatMap((o) =>
      o.kind === 'Deployment' || o.kind === 'StatefulSet'
        ? (
            o.spec as { template: { spec: { containers: { image: string }[] } } }
          ).template.spec.containers.map((c) => c.image.split(':')[0])
        : [],
    );
    for (const build of plain.docker_builds) {
      expect(stages).toContain(build.target);
      expect(images).toContain(build.ref);
    }
    const manager = plain.docker_builds.find((b) => b.ref === 'cluster-manager');
    expect(manager?.live_update).toEqual([{ sync: ['src', '/app/src'] }]);
    expect(manager?.build_args).toEqual({ APP_OWNER: '1000:1000' });
  });

  it('labels every resource, starts the validators first and attaches objects that exist', () => {
    const names = new Set(plain.yaml.map((o) => `${o.metadata.name}:${o.kind.toLowerCase()}`));
    const workloads = plain.yaml.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet');
    expect(plain.resources.map((r) => r.workload).sort()).toEqual(
      workloads.map((w) => w.metadata.name).sort(),
    );
    for (const resource of plain.resources) {
      expect(resource.labels?.length, resource.workload).toBeGreaterThan(0);
      for (const object of resource.objects ?? []) expect(names.has(object), object).toBe(true);
    }
    const manager = plain.resources.find((r) => r.workload === 'cluster-manager');
    expect(manager?.resource_deps).toEqual(['validator']);
    expect(manager?.port_forwards).toEqual([
      expect.objectContaining({ local: 8080, container: 8080 }),
    ]);
    const validator = plain.resources.find((r) => r.workload === 'validator');
    expect(validator?.port_forwards).toEqual([
      expect.objectContaining({ local: 50832, container: 50832 }),
    ]);
    const tests = plain.local_resources.find((r) => r.name === 'unit-tests');
    expect(tests?.labels).toEqual(['tests']);
    for (const folder of tests?.cmd.filter((arg) => arg.startsWith('test/')) ?? [])
      expect(existsSync(join(repoRoot, folder)), folder).toBe(true);
  });

  it("rebuilds the nodes' image (every source) only when asked, as docs/tilt.md says: editing the manager does not restart the chain", () => {
    const nodes = plain.docker_builds.find((b) => b.ref === 'localnet-node');
    // The whole context: the image bundles every entry point (its preStop runs the manager's CLI).
    expect([nodes?.ignore, nodes?.only]).toEqual([undefined, undefined]);
    const validator = plain.resources.find((r) => r.workload === 'validator');
    expect(validator?.trigger_mode).toBe('manual');
    const manager = plain.resources.find((r) => r.workload === 'cluster-manager');
    expect(manager?.trigger_mode).toBeUndefined();
    const doc = readFileSync(join(repoRoot, 'docs/tilt.md'), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain('The **validator** resource is therefore in manual trigger mode');
    expect(doc).toContain(
      'Editing the manager does not restart the localnet; when you change the node, click.',
    );
  });

  it('has buttons for scale +1, scale -1, trigger view and status on the manager', () => {
    expect(plain.buttons.map((b) => b.name)).toEqual([
      'scale-up',
      'scale-down',
      'trigger-view',
      'status',
    ]);
    for (const button of plain.buttons) {
      expect(button.resource).toBe('cluster-manager');
      expect(button.argv.slice(0, 2)).toEqual(['sh', '-c']);
      expect(button.argv.slice(3)).toEqual([button.name, 'kind-kind', 'localnet']);
    }
  });

  it.skipIf(noKubectl)(
    'makes a genesis for --validators 6, renames its ConfigMap and points the pods at it',
    () => {
      const six = runTiltfile({ args: { validators: '6' }, localOutput: '{"genesis": 6}' });
      expect(six.failed).toBeNull();
      expect(six.local).toEqual([
        ['node_modules/.bin/node', 'scripts/localnet-manifests.ts', '--genesis-for', '6'],
      ]);
      const genesis = findObject(six.yaml, 'ConfigMap', 'v1-localnet-genesis');
      expect(genesis.metadata.name).toBe('v1-localnet-genesis-6v');
      expect(stringData(genesis)['genesis.json']).toBe('{"genesis": 6}');
      const validators = findObject(six.yaml, 'StatefulSet', 'validator');
      const spec = validators.spec as {
        replicas: number;
        template: { spec: { volumes: { configMap?: { name: string } }[] } };
      };
      expect(spec.replicas).toBe(6);
      expect(
        spec.template.spec.volumes.some((v) => v.configMap?.name === 'v1-localnet-genesis-6v'),
      ).toBe(true);
      expect(six.resources.find((r) => r.workload === 'validator')?.objects).toContain(
        'v1-localnet-genesis-6v:configmap',
      );
    },
  );

  it.skipIf(noKubectl)(
    'switches to the manual pacemaker and lets the scale buttons drive blocks',
    () => {
      const manual = runTiltfile({ args: { pacemaker: 'manual' } });
      expect(manual.failed).toBeNull();
      const validators = findObject(manual.yaml, 'StatefulSet', 'validator');
      const args = (validators.spec as { template: { spec: { containers: { args: string[] }[] } } })
        .template.spec.containers[0]!.args;
      expect(args[args.indexOf('--pacemaker') + 1]).toBe('manual');
      for (const name of ['scale-up', 'scale-down'])
        expect(manual.buttons.find((b) => b.name === name)?.argv[2]).toContain('--drive');
      expect(plain.buttons.find((b) => b.name === 'scale-up')?.argv[2]).not.toContain('--drive');
    },
  );

  it.skipIf(noKubectl).each([
    [{ validators: '0' }, /--validators must be 1 to 32/],
    [{ validators: '33' }, /--validators must be 1 to 32/],
    [{ validators: 'six' }, /--validators must be a whole number/],
    [{ pacemaker: 'fast' }, /--pacemaker must be auto or manual/],
  ])('fails early on bad settings: %j', (args, message) => {
    expect(runTiltfile({ args }).failed).toMatch(message);
  });

  it.skipIf(noKubectl)(
    'refuses a context that is not a local cluster unless it is allowed explicitly',
    () => {
      expect(runTiltfile({ context: 'gke_prod_cluster' }).failed).toMatch(/not a local cluster/);
      const allowed = runTiltfile({ context: 'gke_dev', args: { 'allow-context': 'gke_dev' } });
      expect(allowed.failed).toBeNull();
      expect(allowed.allowed_contexts).toEqual(['gke_dev']);
      for (const context of ['k3d-dev', 'orbstack'])
        expect(runTiltfile({ context }).failed, context).toBeNull();
      for (const context of ['minikube', 'docker-desktop', 'rancher-desktop', 'orbstack'])
        expect(code).toContain(`'${context}'`);
      for (const prefix of ['kind-', 'k3d-']) expect(code).toContain(`'${prefix}'`);
    },
  );
});

describe.skipIf(!python || noKubectl)("the buttons' shell scripts", () => {
  const plain = withKubectl(() => runTiltfile({}));
  const sandbox = mkdtempSync(join(tmpdir(), 'cm-tilt-buttons-'));
  afterAll(() => rmSync(sandbox, { recursive: true, force: true }));
  // A folder laid out like the repo, whose `node` and `kubectl` only record how they were called.
  const calls = join(sandbox, 'calls.log');
  mkdirSync(join(sandbox, 'node_modules/.bin'), { recursive: true });
  mkdirSync(join(sandbox, 'k8s/base/cluster-manager'), { recursive: true });
  mkdirSync(join(sandbox, 'bin'));
  writeFileSync(
    join(sandbox, 'k8s/base/cluster-manager/rpc-token'),
    readRepoFile('k8s/base/cluster-manager/rpc-token'),
  );
  const recorder = (name: string, body: string): void => {
    const path = join(sandbox, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
  };
  recorder(
    'node_modules/.bin/node',
    `echo "node $* url=$CLUSTER_MANAGER_URL token=$CLUSTER_MANAGER_TOKEN" >> '${calls}'`,
  );
  recorder('bin/kubectl', `echo "kubectl $*" >> '${calls}'; printf 4`);

  function press(name: string): { status: number | null; calls: string[] } {
    const button = plain.buttons.find((b) => b.name === name)!;
    rmSync(calls, { force: true });
    const result = spawnSync(button.argv[0]!, button.argv.slice(1), {
      cwd: sandbox,
      env: { PATH: `${join(sandbox, 'bin')}:/usr/bin:/bin` },
      encoding: 'utf8',
    });
    const log = existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [];
    return { status: result.status, calls: log };
  }

  const token = readRepoFile('k8s/base/cluster-manager/rpc-token').trim();
  const cli = (args: string): string =>
    `node src/bin/cluster-manager.ts ${args} url=http://localhost:8080 token=${token}`;

  it('scale +1 reads the replicas and asks the manager for one more', () => {
    expect(press('scale-up')).toEqual({
      status: 0,
      calls: [
        'kubectl --context kind-kind --namespace localnet get statefulset validator -o jsonpath={.spec.replicas}',
        cli('scale 5 --wait active --timeout 300'),
      ],
    });
  });

  it('scale -1 asks for one fewer', () => {
    expect(press('scale-down').calls.at(-1)).toBe(cli('scale 3 --wait active --timeout 300'));
  });

  it('trigger view and status call their commands', () => {
    expect(press('trigger-view').calls).toEqual([cli('trigger-view')]);
    expect(press('status').calls).toEqual([cli('status')]);
  });
});
