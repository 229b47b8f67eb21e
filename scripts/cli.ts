#!/usr/bin/env node
import { Command } from 'commander';
import { applyLocalEnv } from './local-env';
import { registerTenancy } from './cli/tenancy';
import { registerSwitches } from './cli/switches';
import { registerCatalog } from './cli/catalog';
import { registerPlatform } from './cli/platform';
import { registerUsage } from './cli/usage';
import { registerWeb } from './cli/web';
import { registerSearch } from './cli/search';
import { registerDoctor } from './cli/doctor';
import { registerLists } from './cli/lists';
import { describeFailure, fail } from './cli/with-services';
import { logger } from '../shared/logger';

/**
 * The operator CLI: `npx gateway <command>`. It reads DATABASE_URL, REDIS_URL and SECRET_KEY from the
 * environment, or the embedded default's remembered values in .data/env.json.
 * Each command family registers itself from its own file in scripts/cli/.
 */
applyLocalEnv();
// The CLI speaks in its own one-line messages; the services' logs only when LOG_LEVEL asks for them.
if (!process.env.LOG_LEVEL) logger.level = 'error';

// Positional options: a command's options before its subcommand's name are its own (`usage --from`
// is the report's, `usage rollup --from` the rollup's).
export const program = new Command('gateway').description('Inference gateway operator CLI').enablePositionalOptions();
registerTenancy(program);
registerSwitches(program);
registerCatalog(program);
registerPlatform(program);
registerUsage(program);
registerWeb(program);
registerSearch(program);
registerDoctor(program);
registerLists(program);

if (require.main === module) {
  program.parseAsync(process.argv).catch((err) => fail(describeFailure(err)));
}
