// What each package holds, by audience: which files of the repository (sources compiled into dist/ by
// tsconfig.build.json, and files used as they are) go where in the package. The sources stay where they are; a
// package is staged from them (stage.ts). A compiled folder belongs to one package only: imports that cross into
// another package are rewritten to that package's exports. Inside a package the repository's layout is kept
// (dist/src/sdk, dist/conformance, …): files read beside their modules are found where the sources find them, and
// the bins of bin/ run unchanged (bin/run.js loads the source in the repository, dist/ when installed).

export type PackageKey = 'protocol' | 'client' | 'conformance' | 'server';

export interface Entry {
  /** A file or folder of the repository (after the build, for compiled code under dist/). */
  from: string;
  /** Where it goes in the package. */
  to: string;
  /** Compiled code: only .js and .d.ts files are taken, and their imports are resolved (see imports.ts). */
  compiled?: boolean;
  /** Sub-folders of `from` that belong to another package. */
  except?: string[];
}

export interface PackageContents {
  key: PackageKey;
  /** Holds manifest.json (package.json without its version and the versions of its dependencies) and README.md. */
  dir: string;
  entries: Entry[];
}

/** In dependency order: a package only depends on packages before it. */
export const PACKAGES: PackageContents[] = [
  {
    key: 'protocol',
    dir: 'packages/protocol',
    entries: [
      { from: 'dist/generated', to: 'dist/generated', compiled: true },
      { from: 'generated/validators.cjs', to: 'dist/generated/validators.cjs' },
      { from: 'generated/schemas.json', to: 'schemas.json' },
      { from: 'spec', to: 'spec' },
      { from: 'packages/protocol/README.md', to: 'README.md' },
    ],
  },
  {
    key: 'client',
    dir: 'packages/client',
    entries: [
      { from: 'dist/src/sdk', to: 'dist/src/sdk', compiled: true },
      { from: 'dist/src/shared', to: 'dist/src/shared', compiled: true },
      { from: 'bin/run.js', to: 'bin/run.js' },
      { from: 'bin/bridge-connector.js', to: 'bin/bridge-connector.js' },
      { from: 'packages/client/README.md', to: 'README.md' },
    ],
  },
  {
    key: 'conformance',
    dir: 'packages/conformance',
    entries: [
      { from: 'dist/conformance', to: 'dist/conformance', compiled: true },
      // Read at run time beside the modules (CONFORMANCE_DIR in scenario.ts), as in the repository.
      { from: 'conformance/requirements.yaml', to: 'dist/conformance/requirements.yaml' },
      { from: 'conformance/fixtures-layout.yaml', to: 'dist/conformance/fixtures-layout.yaml' },
      { from: 'conformance/scenarios', to: 'dist/conformance/scenarios' },
      { from: 'conformance/examples', to: 'examples' },
      // Every requirement cites an anchor of protocol.md; provisioning and settings files follow conformance.yaml.
      { from: 'spec/protocol.md', to: 'spec/protocol.md' },
      { from: 'spec/received-protocol.md', to: 'spec/received-protocol.md' },
      { from: 'spec/conformance.yaml', to: 'spec/conformance.yaml' },
      { from: 'bin/run.js', to: 'bin/run.js' },
      { from: 'bin/bridge-conformance.js', to: 'bin/bridge-conformance.js' },
      { from: 'conformance/README.md', to: 'README.md' },
    ],
  },
  {
    key: 'server',
    dir: 'packages/server',
    entries: [
      { from: 'dist/src', to: 'dist/src', compiled: true, except: ['sdk', 'shared'] },
      { from: 'src/dashboard/assets', to: 'dist/src/dashboard/assets' },
      { from: 'docs', to: 'dist/docs' },
      { from: 'bin/run.js', to: 'bin/run.js' },
      { from: 'bin/bridge.js', to: 'bin/bridge.js' },
      { from: 'packages/server/README.md', to: 'README.md' },
    ],
  },
];

/** Files every package carries. */
export const COMMON: Entry[] = [
  { from: 'LICENSE', to: 'LICENSE' },
  { from: 'CHANGELOG.md', to: 'CHANGELOG.md' },
];
