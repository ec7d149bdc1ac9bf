// JSON schemas of the control RPC's requests and responses (validation, serialization and the
// OpenAPI document all come from these).

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });

export const errorSchema = {
  $id: 'Error',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: {
          type: 'string',
          description: 'Stable code from the error catalogue (docs/operations.md).',
        },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true },
      },
    },
  },
} as const;

export const actionSchema = {
  $id: 'Action',
  type: 'object',
  properties: {
    seq: { type: 'integer' },
    validatorId: { type: 'string' },
    kind: { type: 'string', enum: ['stake', 'unstake'] },
    state: { type: 'string', enum: ['prepared', 'sent', 'committed', 'failed', 'dropped'] },
    mode: { type: 'string', enum: ['rpc', 'cli'] },
    txHash: nullable({ type: 'string' }),
    preparedHeight: { type: 'integer' },
    sentHeight: nullable({ type: 'integer' }),
    committedHeight: nullable({ type: 'integer' }),
    resultCode: nullable({ type: 'integer' }),
    errorCode: nullable({ type: 'string' }),
    error: nullable({ type: 'string' }),
    reason: { type: 'string' },
    attempts: { type: 'integer' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;

export const phases = [
  'pending',
  'staking',
  'staked',
  'active',
  'unstaking',
  'unstaked',
  'held',
  'failed',
  'unmanaged',
] as const;

export const validatorSchema = {
  $id: 'Validator',
  type: 'object',
  properties: {
    key: { type: 'string', description: 'Validator id, or the address of an unmanaged validator.' },
    id: nullable({ type: 'string' }),
    address: nullable({ type: 'string' }),
    pod: nullable({ type: 'string' }),
    ready: { type: 'boolean' },
    wanted: { type: 'boolean' },
    chain: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['absent', 'staked', 'unstaking', 'unstaked', 'paused'] },
        stakedAmount: nullable({ type: 'string' }),
        unstakingHeight: nullable({ type: 'integer' }),
        lastSignedHeight: nullable({ type: 'integer' }),
      },
    },
    phase: { type: 'string', enum: phases },
    reason: { type: 'string' },
    waitingFor: nullable({ type: 'string' }),
    pendingAction: nullable({ type: 'string', enum: ['stake', 'unstake'] }),
    lastAction: nullable({ $ref: 'Action#' }),
  },
} as const;

export const readinessSchema = {
  type: 'object',
  properties: {
    discovery: {
      type: 'string',
      enum: ['kubernetes', 'static'],
      description: 'Where the validators come from (CM_DISCOVERY)',
    },
    ready: { type: 'boolean' },
    synced: { type: 'boolean' },
    leader: { type: 'boolean' },
    leaderIdentity: nullable({ type: 'string' }),
    paused: { type: 'boolean' },
    chain: {
      type: 'object',
      properties: {
        healthy: { type: 'boolean' },
        height: { type: 'integer' },
        lastError: nullable({ type: 'string' }),
        lastBlockAt: nullable({
          type: 'string',
          description: "When the newest block read was made, per its header's timestamp",
        }),
        trusted: {
          type: 'boolean',
          description:
            'False while the chain went back below the highest height seen, or a seen block differs: no action is taken.',
        },
        untrustedReason: nullable({ type: 'string' }),
        highest: { type: 'integer', description: 'The highest height seen.' },
      },
    },
    minimumSet: nullable({
      type: 'object',
      properties: { size: { type: 'integer' }, source: { type: 'string' } },
      description: 'The minimum validator set in force (null while not known).',
    }),
    informers: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          synced: { type: 'boolean' },
          restarts: { type: 'integer' },
          lastError: nullable({ type: 'string' }),
        },
      },
    },
    queueDepth: { type: 'integer' },
    journal: {
      type: 'object',
      description:
        'The chain the journal is bound to, and a journal of another chain set aside at start',
      properties: {
        chain: nullable({
          type: 'object',
          properties: { chainId: { type: 'string' }, genesisHash: { type: 'string' } },
        }),
        setAside: nullable({
          type: 'object',
          properties: { to: { type: 'string' }, reason: { type: 'string' } },
        }),
      },
    },
  },
} as const;

export const scaleBodySchema = {
  type: 'object',
  required: ['replicas'],
  additionalProperties: false,
  properties: {
    replicas: {
      type: 'integer',
      minimum: 0,
      maximum: 999,
      description: 'Validators the StatefulSet should run.',
    },
    wait: {
      type: 'string',
      enum: ['none', 'staked', 'active'],
      default: 'none',
      description: 'Answer once the validators are staked, or signing blocks.',
    },
    timeoutSeconds: { type: 'integer', minimum: 1, maximum: 3600, default: 300 },
    drive: {
      type: 'boolean',
      default: false,
      description: 'Trigger views while waiting (manual pacemaker).',
    },
    force: {
      type: 'boolean',
      default: false,
      description:
        'Go ahead over the safety refusals: below the minimum validator set (lowering it), over a running drain (superseding it), past validators whose key problem hides whether they are staked.',
    },
  },
} as const;

export const scaleResultSchema = {
  type: 'object',
  required: ['statefulSet', 'previous', 'replicas', 'wait', 'outcome', 'done', 'missing'],
  properties: {
    statefulSet: { type: 'string' },
    previous: { type: 'integer', description: 'Replicas before this request.' },
    replicas: { type: 'integer' },
    wait: { type: 'string', enum: ['none', 'staked', 'active'] },
    outcome: {
      type: 'string',
      enum: ['done', 'draining', 'timeout'],
      description:
        '`done` (200): the target holds; `draining` (202): a scale-down with `wait: none` goes on in the background; `timeout` (504).',
    },
    done: { type: 'boolean' },
    elapsedMs: { type: 'integer' },
    drained: {
      type: 'array',
      items: { type: 'string' },
      description: 'Validators drained on the way down (being drained, with `outcome: draining`).',
    },
    missing: {
      type: 'array',
      description: 'Who is not where the request wants them yet (empty when done).',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          phase: { type: 'string' },
          reason: { type: 'string' },
        },
      },
    },
    height: { type: 'integer', description: 'Chain height when the answer was made.' },
    error: {
      type: 'object',
      description: 'With a 504: the catalogue code SCALE_TIMEOUT and who is missing.',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
} as const;

export const planSchema = {
  type: 'object',
  properties: {
    discovery: { type: 'string', enum: ['kubernetes', 'static'] },
    synced: { type: 'boolean' },
    paused: { type: 'boolean' },
    height: { type: 'integer' },
    actions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          key: { type: 'string' },
          id: nullable({ type: 'string' }),
          action: { type: 'string', enum: ['stake', 'unstake'] },
          waitingFor: nullable({ type: 'string' }),
          reason: { type: 'string' },
        },
      },
    },
  },
} as const;

export const actionsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'string',
      pattern: '^(?:[1-9]\\d{0,2}|1000)$',
      description: '1-1000 (default 50).',
    },
    before: {
      type: 'string',
      pattern: '^[1-9]\\d{0,15}$',
      description: 'Sequence number to page before.',
    },
    validator: { type: 'string', pattern: '^\\d{3}$' },
  },
} as const;

export const healthSchema = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['ok'] }, version: { type: 'string' } },
} as const;

export const validatorsSchema = {
  type: 'object',
  properties: { validators: { type: 'array', items: { $ref: 'Validator#' } } },
} as const;

export const actionsPageSchema = {
  type: 'object',
  properties: {
    actions: { type: 'array', items: { $ref: 'Action#' } },
    next: {
      ...nullable({ type: 'integer' }),
      description: 'Pass as `before` for the next (older) page; null on the last page.',
    },
  },
} as const;

export const pauseSchema = {
  type: 'object',
  properties: { paused: { type: 'boolean' } },
} as const;

export const triggerViewSchema = {
  type: 'object',
  properties: {
    height: { type: 'integer', description: 'Height after the view.' },
    committed: {
      type: 'boolean',
      description: 'A new block committed within 5 s of the trigger.',
    },
  },
} as const;

export const metricsResponse = {
  200: {
    description: 'Prometheus text exposition format (prom-client); see docs/operations.md.',
    content: { 'text/plain': { schema: { type: 'string' } } },
  },
} as const;

export const openApiResponse = {
  200: {
    description: 'OpenAPI 3.1 document (also kept in docs/openapi.json).',
    type: 'object',
    additionalProperties: true,
  },
} as const;

export const eventStreamResponse = {
  200: {
    description:
      'A text/event-stream that stays open: `event: <name>` and `data: <JSON>` per event (docs/control-rpc.md).',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  },
} as const;

export const departureParamsSchema = {
  type: 'object',
  required: ['pod'],
  properties: {
    pod: {
      type: 'string',
      maxLength: 253,
      pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
      description: 'The pod name (a DNS-1123 subdomain).',
    },
  },
} as const;

export const departureQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeoutSeconds: {
      type: 'string',
      pattern: '^(0|[1-9]\\d?|[12]\\d\\d|300)$',
      description: 'Long-poll up to this many seconds (0–300, default 30) for a final answer.',
    },
  },
} as const;

export const departureSchema = {
  type: 'object',
  required: ['pod', 'validatorId', 'departed', 'final', 'code', 'reason', 'height'],
  properties: {
    pod: { type: 'string' },
    validatorId: nullable({ type: 'string' }),
    departed: {
      type: 'boolean',
      description: "The pod's validator has left the active set.",
    },
    final: {
      type: 'boolean',
      description:
        'Waiting cannot change the answer: the pod may go (departed, or the manager will never unstake it).',
    },
    code: {
      type: 'string',
      description:
        'LEFT_SET; final without departing: STILL_WANTED, BELOW_MINIMUM_SET, KEY_MISSING, KEY_INVALID, KEY_DUPLICATE, HELD, UNMANAGED, UNSTAKE_FAILED, NOT_A_VALIDATOR_POD; not final: LEAVING, PAUSED, CHAIN_UNTRUSTED, CHAIN_UNAVAILABLE.',
    },
    reason: { type: 'string' },
    height: { type: 'integer' },
  },
} as const;
