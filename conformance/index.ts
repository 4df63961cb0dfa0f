// The conformance suite as a library: run the server or client role from code, with the same options, reports and
// exit codes as `bridge-conformance`, or use its pieces (requirements, verdicts, the client role's mock).
export { client, server, program, type ClientOptions, type CommonOptions, type ServerOptions } from './cli.js';
export { runClientScenario, ClientContext, type ClientScenario, type ClientRunOptions } from './client/run.js';
export { CLIENT_SCENARIOS } from './client/scenarios.js';
export { judge, type RunResult, type ScenarioResult, type Verdict } from './results.js';
export { loadRequirements, loadScenarios, PROFILES, type Profile, type Requirement } from './scenario.js';
export { requirementsDigest, suiteVersion, type SuiteVersion } from './suite-version.js';
