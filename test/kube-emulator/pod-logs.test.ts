// `pods/log`: the kubelets' output served as the apiserver serves it (container choice, instance
// choice, tail, since, timestamps, byte limit, follow) and refused as it refuses, over HTTP and
// with kubectl.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';
import { startHarness, type Harness } from './harness.ts';

const talker = join(import.meta.dirname, 'fixtures', 'talker.mjs');

async function processHarness(): Promise<Harness> {
  return startHarness({
    kubelet: {
      mode: 'process',
      images: { talker: { command: process.execPath, args: [talker] } },
      readinessPeriodMs: 50,
      restartBackoffMs: 200,
    },
  });
}

async function createPod(
  h: Harness,
  name: string,
  env: Record<string, string>,
  containers = ['main'],
): Promise<void> {
  await h.core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: {
        containers: containers.map((container) => ({
          name: container,
          image: 'talker',
          env: Object.entries(env).map(([key, value]) => ({ name: key, value })),
        })),
      },
    },
  });
}

/** GET …/pods/<pod>/log?<query> with the admin's credentials: status, content type, body. */
async function getLog(
  h: Harness,
  pod: string,
  query = '',
): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(
    `${h.emulator.url}/api/v1/namespaces/default/pods/${pod}/log?${query}`,
  );
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

async function restarts(h: Harness, pod: string): Promise<number> {
  const read = await h.core.readNamespacedPod({ name: pod, namespace: 'default' });
  return read.status?.containerStatuses?.[0]?.restartCount ?? 0;
}

describe('pods/log', () => {
  it('serves the running container, its previous run, tail, timestamps, since and a byte limit', async () => {
    const h = await processHarness();
    await createPod(h, 'talk', { EXIT_AFTER: '4', INTERVAL_MS: '30' });
    const first = await waitFor(
      async () => {
        const log = await getLog(h, 'talk');
        return log.status === 200 && log.body.includes('line 2') ? log : undefined;
      },
      { what: 'two lines of the first run', timeoutMs: 10_000 },
    );
    expect(first.type).toBe('text/plain');
    expect(first.body).toMatch(/^start pid=\d+\nline 1\nline 2\n/);
    await waitFor(async () => (await restarts(h, 'talk')) >= 1, { what: 'a restart' });
    // The previous run ended with a line that had no newline: it comes back as written.
    const previous = await getLog(h, 'talk', 'previous=true');
    expect(previous.status).toBe(200);
    expect(previous.body).toMatch(
      /^start pid=\d+\nline 1\nline 2\nline 3\nwarning 3\nline 4\nno newline at the end$/,
    );
    const tail = await getLog(h, 'talk', 'previous=1&tailLines=2');
    expect(tail.body).toBe('line 4\nno newline at the end');
    expect((await getLog(h, 'talk', 'previous=true&tailLines=0')).body).toBe('');
    const stamped = await getLog(h, 'talk', 'previous=true&timestamps=true&tailLines=3');
    for (const line of stamped.body.split('\n')) {
      expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z \S/);
    }
    expect((await getLog(h, 'talk', 'previous=true&limitBytes=9')).body).toBe('start pid');
    expect((await getLog(h, 'talk', 'previous=true&sinceTime=2999-01-01T00:00:00Z')).body).toBe('');
    const recent = await getLog(h, 'talk', 'previous=true&sinceSeconds=3600');
    expect(recent.body).toBe(previous.body);
  });

  it('follows the current run until the container exits', async () => {
    const h = await processHarness();
    await createPod(h, 'talk', { EXIT_AFTER: '6', INTERVAL_MS: '100' });
    await waitFor(async () => (await getLog(h, 'talk')).body.includes('start'), {
      what: 'the first line',
    });
    const startedAt = Date.now();
    const followed = await getLog(h, 'talk', 'follow=true');
    expect(followed.status).toBe(200);
    // The stream ended on its own when the process exited, with everything it printed.
    expect(followed.body).toMatch(/line 6\nwarning 6\nno newline at the end$/);
    expect(Date.now() - startedAt).toBeLessThan(8_000);
  });

  it('refuses as the apiserver and the kubelet do', async () => {
    const h = await processHarness();
    await createPod(h, 'two', { INTERVAL_MS: '1000' }, ['a', 'b']);
    await h.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'nowhere' },
        spec: { containers: [{ name: 'main', image: 'nowhere:1' }] },
      },
    });
    const status = async (pod: string, query: string): Promise<[number, string]> => {
      const log = await getLog(h, pod, query);
      return [log.status, (JSON.parse(log.body) as { message: string }).message];
    };
    expect(await status('ghost', '')).toEqual([404, 'pods "ghost" not found']);
    expect(await status('two', '')).toEqual([
      400,
      'a container name must be specified for pod two, choose one of: [a b]',
    ]);
    expect(await status('two', 'container=c')).toEqual([
      400,
      'container c is not valid for pod two',
    ]);
    await waitFor(async () => (await getLog(h, 'two', 'container=a')).status === 200, {
      what: 'container a running',
    });
    expect(await status('two', 'container=a&previous=true')).toEqual([
      400,
      'previous terminated container "a" in pod "two" not found',
    ]);
    // While the kubelet creates the container the answer is a 400 too (`ContainerCreating`).
    await waitFor(async () => (await status('nowhere', ''))[1].includes("image can't"), {
      what: 'the image failure',
    });
    expect(await status('nowhere', '')).toEqual([
      400,
      `container "main" in pod "nowhere" is waiting to start: image can't be pulled`,
    ]);
    const invalid = await getLog(h, 'two', 'container=a&tailLines=-1&limitBytes=0');
    expect(invalid.status).toBe(422);
    expect(JSON.parse(invalid.body)).toMatchObject({
      reason: 'Invalid',
      message:
        'PodLogOptions "two" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]',
    });
    expect((await getLog(h, 'two', 'container=a&tailLines=x')).status).toBe(400);
  });

  it('gives an unscheduled pod an empty log and a simulated pod a plausible one', async () => {
    const bare = await startHarness({ kubelet: false });
    await createPod(bare, 'pending', {});
    expect(await getLog(bare, 'pending')).toEqual({ status: 200, type: 'text/plain', body: '' });
    const h = await startHarness({ kubelet: { mode: 'simulated' } });
    await createPod(h, 'sim', {});
    await waitFor(async () => (await getLog(h, 'sim')).body.includes('ready') || undefined, {
      what: 'the simulated log',
    });
    expect((await getLog(h, 'sim')).body).toBe(
      'kube-emulator: simulated container "main" started (no process runs in simulated mode)\nkube-emulator: ready\n',
    );
    h.emulator.kubelet.crash('default', 'sim');
    await waitFor(async () => (await getLog(h, 'sim', 'previous=true')).status === 200, {
      what: 'the crashed run',
    });
    expect((await getLog(h, 'sim', 'previous=true')).body).toContain(
      'container "main" exited with code 1 (simulated crash)',
    );
  });

  it.skipIf(noKubectl)('works with kubectl logs, --previous, --tail, -c and -f', async () => {
    const h = await processHarness();
    await createPod(h, 'talk', { EXIT_AFTER: '3', INTERVAL_MS: '40' });
    await waitFor(async () => (await restarts(h, 'talk')) >= 1, { what: 'a restart' });
    const previous = await h.kubectl(['logs', 'talk', '--previous', '--tail=2']);
    expect(previous).toMatchObject({ code: 0, stdout: 'warning 3\nno newline at the end' });
    const wrong = await h.kubectl(['logs', 'talk', '-c', 'other']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('container other is not valid for pod talk');
    await createPod(h, 'short', { EXIT_AFTER: '5', INTERVAL_MS: '60' });
    await waitFor(async () => (await getLog(h, 'short')).body.includes('start'), {
      what: 'the first line',
    });
    const followed = await h.kubectl(['logs', '-f', 'short'], { timeoutMs: 15_000 });
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(/line 5\nno newline at the end$/);
  });
});
