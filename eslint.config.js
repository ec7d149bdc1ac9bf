// Lint: typed rules for all TypeScript, plus the import boundaries of docs/design.md §Parts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importBoundaries } from './scripts/eslint-import-boundaries.js';

/**
 * docs/design.md §Parts as an allow-list: src folder → the other src folders it may import. A folder
 * not listed here may import nothing of ours (scripts/eslint-import-boundaries.js).
 */
export const parts = {
  pocket: [],
  cli: [],
  'kube-emulator': [],
  localnet: ['pocket', 'cli'],
  manager: ['pocket', 'cli'],
  // The harness drives a devnet and reads the chain with the protocol library's RPC client.
  harness: ['manager', 'devnet', 'pocket'],
  devnet: ['pocket', 'cli', 'manager', 'localnet', 'kube-emulator'],
  bin: ['pocket', 'cli', 'manager', 'localnet', 'kube-emulator', 'devnet', 'harness'],
};

/** Narrower rules inside a part: files under `from` import, of src/, only what `allow` lists. */
const inner = [
  {
    from: 'manager/planner',
    allow: ['manager/model.ts', 'manager/errors.ts'],
    reason: 'the planner is a pure function of the model: docs/design.md §Parts',
  },
];

/** Imports a part allows only in some of its folders. */
const deny = [
  {
    from: 'manager',
    target: 'pocket',
    // The debug CLI's Pocket key and transaction commands live there too (chain/pocket/cli/).
    except: ['manager/chain/pocket'],
    reason:
      'only the Pocket side of the chain port (src/manager/chain/pocket/) imports the protocol library',
  },
  // The readers get the read model and narrow ports (read-model.ts, compose.ts), never Manager.
  ...['manager/scale', 'manager/status.ts', 'manager/rpc'].map((from) => ({
    from,
    target: 'manager/manager.ts',
    reason: 'readers take the read model (read-model.ts) and narrow ports, never the Manager',
  })),
];

export const boundaryConfig = {
  files: ['src/**/*.ts'],
  plugins: { local: { rules: { 'import-boundaries': importBoundaries } } },
  rules: { 'local/import-boundaries': ['error', { parts, inner, deny }] },
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'src/pocket/gen/',
      'src/kube-emulator/protobuf/gen/',
      'coverage/',
      '.devnet/',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowNullish: true },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-unnecessary-condition': [
        'error',
        { allowConstantLoopConditions: true },
      ],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      'max-params': ['error', 4],
      // client-node's generated models are classes used as plain data; literals are what it expects.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-misused-spread': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      'max-params': 'off',
      '@typescript-eslint/require-await': 'off',
      // `waitFor` resolves with any value but undefined, null, false or pending(…): a probe
      // written `ok ? true : 'what I see'` resolves at once with the string and cannot fail.
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "ConditionalExpression[consequent.value=true]:matches([alternate.type='TemplateLiteral'], [alternate.type='Literal'][alternate.raw=/^['\"]/])",
          message:
            "a probe's not-yet answer is pending('…'), not a string (waitFor resolves with it)",
        },
      ],
    },
  },
  {
    // The unit layer (vitest project `unit`): no child processes, no sockets, no devnet.
    files: ['**/*.unit.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['node:child_process', 'node:net', 'node:http', 'node:https', 'execa'].map(
            (name) => ({ name, message: 'a unit test starts no process and opens no socket' }),
          ),
          patterns: [
            {
              group: ['**/devnet/devnet*', '**/support/run-bin*', '**/harness/harness*'],
              message: 'a unit test starts no devnet and no binary (make it a system test)',
            },
          ],
        },
      ],
    },
  },
  boundaryConfig,
  {
    // Node's ESM facade of node:http reads every export, and its WebSocket getters load undici:
    // about 0.09 CPU s of every process start that imports it (node 24; a devnet test run starts
    // some 400 of them). process.getBuiltinModule('node:http') returns the module itself.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'node:https', 'http', 'https'].map((name) => ({
            name,
            allowTypeImports: true,
            message: `values of ${name} come from process.getBuiltinModule('${name}') (eslint.config.js says why)`,
          })),
        },
      ],
    },
  },
  {
    // Size limits for src/: a function a reader can hold in mind.
    files: ['src/**/*.ts'],
    rules: {
      complexity: ['error', 25],
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Debt, named so that it shrinks: each of these files holds one function over the limits
    // above (the manager's constructor, the config loader, the debug commands' registration…).
    // Split one, remove its line.
    files: [
      'src/manager/chain/chain-view.ts',
      'src/manager/cli/debug-commands.ts',
      'src/manager/config.ts',
      'src/manager/discovery/desired-state.ts',
    ],
    rules: { complexity: 'off', 'max-lines-per-function': 'off' },
  },
);
