// @shadowplane/config: config parsing shared by every role. Named exports only.
export {
  EXIT_CONFIG,
  COMMON_ENV,
  CommonEnv,
  EnvBool,
  ConfigError,
  parseConfig,
  loadProviderAllowlist,
  providerApiKey,
  readConfigFile,
} from './config.js';
export { EXIT_USAGE, EXIT_CODES_LINE, renderHelp } from './help.js';
export type { HelpSpec } from './help.js';
