// The node config V1's chart renders for a LocalNet validator — `charts/pocket/values.yaml:73-126`
// at pokt-network/pocket 58c9b650, as `templates/configmap-config.yaml` writes it
// (`toPrettyJson`: keys sorted, two-space indent) into the ConfigMap `validator-NNN-pocket-config`
// that V1's cli-client mounts as p1's CONFIG_PATH (build/localnet/manifests/cli-client.yaml:40-44,
// 95-99). Its `p2p.hostname` is "" (values.yaml:98): p1's `Debug` commands fail without
// POCKET_P2P_HOSTNAME (p1-v1-debug.ts, createP2pModule).

export const V1_CHART_CONFIG = {
  consensus: {
    max_mempool_bytes: 500_000_000,
    pacemaker_config: { debug_time_between_steps_msec: 1000, manual: true, timeout_msec: 10_000 },
    private_key: '',
  },
  fisherman: { enabled: false },
  ibc: { enabled: true, host: { private_key: '' }, stores_dir: '/pocket/data/ibc' },
  logger: { format: 'json', level: 'debug' },
  p2p: {
    hostname: '',
    is_empty_connection_type: false,
    max_mempool_count: 100_000,
    port: 42069,
    private_key: '',
    use_rain_tree: true,
  },
  persistence: {
    block_store_path: '/pocket/data/block-store',
    health_check_period: '30s',
    max_conn_idle_time: '1m',
    max_conn_lifetime: '5m',
    max_conns_count: 50,
    min_conns_count: 1,
    node_schema: 'pocket',
    postgres_url: '',
    trees_store_dir: '/pocket/data/trees',
    tx_indexer_path: '/pocket/data/tx-indexer',
  },
  private_key: '',
  root_directory: '/go/src/github.com/pocket-network',
  rpc: { enabled: true, port: '50832', timeout: 30_000, use_cors: false },
  servicer: { enabled: false },
  telemetry: { address: '0.0.0.0:9000', enabled: true, endpoint: '/metrics' },
  utility: { max_mempool_transaction_bytes: 1_073_741_824, max_mempool_transactions: 9000 },
  validator: { enabled: true },
} as const;

/** The file as the chart's ConfigMap holds it. */
export function v1ChartConfigJson(): string {
  return `${JSON.stringify(V1_CHART_CONFIG, null, 2)}\n`;
}
