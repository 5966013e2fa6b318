// Lint rules that keep the layers apart and catch what the type checker does not.
// Layers: scripts, benches and top-level tests → services → libs. A service never imports another
// service (the `shadowplane` launcher, which composes the roles, is the one exception); nothing
// imports another package's sources or tests by path; a workspace imports only what its
// package.json declares.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const SERVICES = ['cli', 'control', 'duplicator', 'provider-sim', 'shadowplane', 'sidecar', 'verdict'];

/** no-restricted-imports paths for a file in service `self`: every other service is off-limits. */
function otherServices(self) {
  return SERVICES.filter((s) => s !== self).map((s) => ({
    name: `@shadowplane/${s}`,
    message: `a service never imports another service (${self} → ${s}); share code through libs/`,
  }));
}

const deepImport = {
  group: ['@shadowplane/*/src/*', '@shadowplane/*/test/*', '@shadowplane/*/src', '@shadowplane/*/test'],
  message: "import a package through its public entry (its package.json 'exports'), not its files",
};
// A relative path that climbs out of its package into another one (libs/x → ../../y/src/…).
const crossPackagePath = {
  regex: '^(\\.\\./)+(libs|services)/|^(\\.\\./)+[a-z0-9-]+/(src|test)/',
  message: 'import another package by its name, not by a relative path; shared test helpers live in libs/testkit',
};
const patterns = [deepImport, crossPackagePath];

export default tseslint.config(
  {
    ignores: [
      'services/*/bench/**',
      '**/node_modules/**',
      '.bin/**',
      '.tmp/**',
      '.tmp-*/**',
      'dist/**',
      '**/dist/**',
      'demo-out/**',
      'loadtests/out/**',
      'test-artifacts/**',
      'coverage/**',
    ],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: { 'import-x/resolver-next': [importX.createNodeResolver()] },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'import-x/no-relative-packages': 'error',
      'no-restricted-imports': ['error', { patterns }],
      'import-x/no-extraneous-dependencies': ['error', { includeTypes: true }],
    },
  },
  ...SERVICES.filter((s) => s !== 'shadowplane').flatMap((s) => [
    {
      files: [`services/${s}/**/*.ts`],
      rules: { 'no-restricted-imports': ['error', { paths: otherServices(s), patterns }] },
    },
    {
      // Tests may start another role through its public entry (an integration test spans roles:
      // shadowctl against a real control, control's kill switch against a real duplicator), but
      // never reach into another package's files.
      files: [`services/${s}/test/**/*.ts`, `services/${s}/src/**/*.test.ts`],
      rules: { 'no-restricted-imports': ['error', { patterns }] },
    },
  ]),
  {
    // Benchmarks, load tests and the docs generator measure or describe a package's internals on
    // purpose; they are tools beside the packages, not packages, so they may import files by path.
    files: ['bench/**/*.ts', 'loadtests/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImport] }] },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: SERVICES.map((s) => ({ name: `@shadowplane/${s}`, message: 'libs never import services' })),
          patterns,
        },
      ],
    },
  },
);
