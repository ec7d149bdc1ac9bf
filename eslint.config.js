// Lint: typed rules for all TypeScript, plus the import boundaries of DESIGN.md ("Parts").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Folders of src/ and the parts of ours each one must not import. */
const boundaries = {
  pocket: ['manager', 'localnet', 'kube-emulator', 'devnet', 'bin', 'cli'],
  cli: ['pocket', 'manager', 'localnet', 'kube-emulator', 'devnet', 'bin'],
  manager: ['localnet', 'kube-emulator', 'devnet', 'bin'],
  localnet: ['manager', 'kube-emulator', 'devnet', 'bin'],
  'kube-emulator': ['pocket', 'manager', 'localnet', 'devnet', 'bin', 'cli'],
  devnet: ['bin'],
};

const boundaryConfigs = Object.entries(boundaries).map(([part, forbidden]) => ({
  files: [`src/${part}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: forbidden.map((name) => ({
          group: [`**/${name}/*`, `**/${name}`, `**/src/${name}/**`],
          message: `src/${part}/ may not import src/${name}/ (see DESIGN.md, "Parts").`,
        })),
      },
    ],
  },
}));

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
  ...boundaryConfigs,
);
