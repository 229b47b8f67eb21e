import type { Command } from 'commander';
import { FEATURES, isFeature, readSwitches, setSwitch } from '../../shared/switches/switches';
import { fail, withServices } from './with-services';

/** `gateway switch list|engage|release <feature>`: operator kill switches. */
export function registerSwitches(program: Command): void {
  const sw = program.command('switch').description(`operator kill switches (${Object.keys(FEATURES).join(', ')})`);
  sw.command('list').description('show every kill switch and whether it is engaged').action(() =>
    withServices(async (redis) => {
      for (const [f, on] of Object.entries(await readSwitches(redis))) console.log(`${f.padEnd(18)} ${on ? 'ENGAGED (off)' : 'released (on)'}`);
    }),
  );
  for (const [verb, engaged] of [['engage', true], ['release', false]] as const) {
    sw.command(`${verb} <feature>`).description(engaged ? 'engage a kill switch: the feature answers 503 <feature>_disabled on every pod' : 'release a kill switch: the feature works again').action((feature: string) =>
      withServices(async (redis) => {
        if (!isFeature(feature)) fail(`unknown feature '${feature}'; one of ${Object.keys(FEATURES).join(', ')}`);
        await setSwitch(redis, feature, engaged);
        console.log(`${feature}: ${engaged ? 'engaged' : 'released'}`);
      }),
    );
  }
}
