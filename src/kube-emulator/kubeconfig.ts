// Kubeconfig documents for the emulator: the object form `KubeConfig.loadFromOptions` takes,
// and the YAML file kubectl reads.
import { stringify } from 'yaml';

/** The shape `@kubernetes/client-node`'s `KubeConfig.loadFromOptions()` accepts. */
export interface KubeconfigOptions {
  clusters: { name: string; server: string; skipTLSVerify: boolean; caData?: string }[];
  users: { name: string; token?: string }[];
  contexts: { name: string; cluster: string; user: string; namespace?: string }[];
  currentContext: string;
}

export function kubeconfigOptions(options: {
  server: string;
  caCert: string | undefined;
  token: string | undefined;
  namespace: string | undefined;
  user?: string;
}): KubeconfigOptions {
  const user = options.user ?? 'admin';
  return {
    clusters: [
      {
        name: 'kube-emulator',
        server: options.server,
        skipTLSVerify: options.caCert === undefined,
        ...(options.caCert === undefined
          ? {}
          : { caData: Buffer.from(options.caCert).toString('base64') }),
      },
    ],
    users: [{ name: user, ...(options.token === undefined ? {} : { token: options.token }) }],
    contexts: [
      {
        name: 'kube-emulator',
        cluster: 'kube-emulator',
        user,
        ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      },
    ],
    currentContext: 'kube-emulator',
  };
}

/** The kubeconfig file (YAML) for the same settings. */
export function kubeconfigYaml(config: KubeconfigOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: config.clusters.map((cluster) => ({
      name: cluster.name,
      cluster: {
        server: cluster.server,
        ...(cluster.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
        ...(cluster.caData === undefined ? {} : { 'certificate-authority-data': cluster.caData }),
      },
    })),
    users: config.users.map((user) => ({
      name: user.name,
      user: user.token === undefined ? {} : { token: user.token },
    })),
    contexts: config.contexts.map((context) => ({
      name: context.name,
      context: {
        cluster: context.cluster,
        user: context.user,
        ...(context.namespace === undefined ? {} : { namespace: context.namespace }),
      },
    })),
    'current-context': config.currentContext,
    preferences: {},
  });
}
