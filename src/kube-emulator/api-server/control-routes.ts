// The test-only HTTP control surface under /_emulator/ (real clients never call it).
import type { Authenticator } from '../auth/auth.ts';
import type { Faults } from '../faults.ts';
import type { ControlAction, LoggedRequest } from './http-server.ts';
import type { KubeletControl } from '../kubelets/kubelet.ts';

function text(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string') throw new Error(`${key} is required`);
  return value;
}

function number(body: Record<string, unknown>, key: string, fallback: number): number {
  const value = body[key];
  return typeof value === 'number' ? value : fallback;
}

/** Control actions by route: `POST /_emulator/<route>` with a JSON body. */
export function control(options: {
  faults: Faults;
  kubelet: KubeletControl;
  auth: Authenticator;
  requestLog: () => readonly LoggedRequest[];
}): Record<string, ControlAction> {
  const { faults, kubelet, auth } = options;
  return {
    'faults/fail-next': (body) =>
      faults.failNext(number(body, 'count', 1), body.code === 429 ? 429 : 500),
    'faults/latency': (body) => faults.setLatency(number(body, 'ms', 0)),
    'faults/expire-next-watch': (body) => faults.expireNextWatch(number(body, 'count', 1)),
    'faults/reset-watches': () => faults.resetWatches(),
    'faults/end-watches': () => faults.endWatches(),
    'faults/pause-events': () => faults.pauseEvents(),
    'faults/resume-events': () => faults.resumeEvents(),
    'faults/restart': (body) =>
      faults.restart({
        rvJump: number(body, 'rvJump', 1_000_000),
        connections: body.connections === 'end' ? 'end' : 'reset',
      }),
    'kubelet/set-ready': (body) =>
      kubelet.setReady(text(body, 'namespace'), text(body, 'pod'), body.ready !== false),
    'kubelet/crash': (body) => kubelet.crash(text(body, 'namespace'), text(body, 'pod')),
    'kubelet/kill': (body) =>
      kubelet.kill(
        text(body, 'namespace'),
        text(body, 'pod'),
        typeof body.signal === 'string' ? (body.signal as NodeJS.Signals) : 'SIGTERM',
      ),
    'kubelet/termination-delay': (body) =>
      kubelet.setTerminationDelay(
        number(body, 'ms', 0),
        typeof body.pod === 'string'
          ? { namespace: text(body, 'namespace'), name: body.pod }
          : undefined,
      ),
    'kubelet/log-path': (body) => ({
      path: kubelet.logPath(text(body, 'namespace'), text(body, 'pod')),
    }),
    tokens: (body) => ({
      token: auth.issueToken(text(body, 'namespace'), text(body, 'serviceAccount')),
    }),
    requests: () => options.requestLog(),
  };
}
