// What the sidecar does around a client-node informer: restart it with backoff after `error`
// (client-node stops an informer for good on any error but 410).
import {
  makeInformer,
  type CoreV1Api,
  type KubeConfig,
  type V1ConfigMap,
} from '@kubernetes/client-node';

export interface RestartingInformer {
  readonly errors: number;
  readonly connects: number;
  readonly adds: string[];
  names(): string[];
  stop(): Promise<void>;
}

export async function restartingInformer(
  kc: KubeConfig,
  core: CoreV1Api,
): Promise<RestartingInformer> {
  const informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () =>
    core.listNamespacedConfigMap({ namespace: 'default' }),
  );
  const state = {
    errors: 0,
    connects: 0,
    stopped: false,
    backoffMs: 50,
    timer: undefined as NodeJS.Timeout | undefined,
  };
  const adds: string[] = [];
  informer.on('add', (cm: V1ConfigMap) => adds.push(cm.metadata?.name ?? ''));
  informer.on('connect', () => {
    state.connects++;
  });
  const restart = (): void => {
    if (state.stopped) return;
    state.timer = setTimeout(() => {
      informer.start().then(
        () => {
          state.backoffMs = 50;
        },
        () => undefined, // the error callback fires too and schedules the next try
      );
    }, state.backoffMs);
    state.backoffMs = Math.min(state.backoffMs * 2, 1000);
  };
  informer.on('error', () => {
    state.errors++;
    restart();
  });
  await informer.start();
  return {
    get errors() {
      return state.errors;
    },
    get connects() {
      return state.connects;
    },
    adds,
    names: () =>
      informer
        .list('default')
        .map((cm) => cm.metadata?.name ?? '')
        .sort(),
    async stop() {
      state.stopped = true;
      clearTimeout(state.timer);
      await informer.stop();
    },
  };
}
