import fs from 'fs';
import type { Command } from 'commander';
import { importCatalog, providerSchema } from '../../shared/catalog/catalog-ops';
import { Model, Provider } from '../../shared/db/models';
import { fail, withServices } from './with-services';
import { poolOfOne, type DeploymentSpec } from '../../shared/catalog/deployments';

/** `name (provider/upstream weight=.. priority=.. rpm=.. tpm=.. max_concurrency=.. base_model=..)`, comma-separated. */
function describeDeployments(stored: DeploymentSpec[] | undefined, provider: string | undefined, upstream: string): string {
  const list = stored?.length ? stored : poolOfOne(String(provider), upstream);
  return list
    .map((d) => {
      const opts = (['weight', 'priority', 'rpm', 'tpm', 'max_concurrency', 'base_model'] as const).filter((k) => d[k] !== undefined).map((k) => ` ${k}=${d[k]}`).join('');
      return `${d.name} (${d.provider}/${d.upstream}${opts})`;
    })
    .join(', ');
}

/** `gateway catalog import <file>`, `gateway catalog list`, `gateway provider add ...`. */
export function registerCatalog(program: Command): void {
  const catalog = program.command('catalog').description('the model catalog');
  catalog
    .command('import <file>')
    .description('create or update providers and models from a JSON file (see docs/catalog.md)')
    .action((file: string) =>
      withServices(async (redis) => {
        let doc: unknown;
        try {
          doc = JSON.parse(fs.readFileSync(file, 'utf8'));
        } catch (err) {
          fail(`cannot read ${file}: ${(err as Error).message}`);
        }
        const n = await importCatalog(redis, doc);
        for (const w of n.warnings) console.error(`warning: ${w}`);
        console.log(`imported ${n.providers} provider(s), ${n.models} model(s)`);
      }),
    );
  catalog.command('list').description('list models: public id, provider, upstream name, capabilities').action(() =>
    withServices(async () => {
      const providers = new Map((await Provider.findAll()).map((p) => [p.id, p.name]));
      for (const m of await Model.findAll({ order: [['publicId', 'ASC']] })) {
        const caps = Object.entries(m.capabilities).filter(([, v]) => v).map(([k]) => k).join(',');
        console.log(`${m.publicId.padEnd(24)} ${String(providers.get(m.providerId)).padEnd(14)} ${m.upstreamName.padEnd(24)} ${caps}${m.enabled ? '' : ' (disabled)'}`);
        console.log(`  deployments: ${describeDeployments(m.deployments, providers.get(m.providerId), m.upstreamName)}`);
        if (m.fallbacks?.length) console.log(`  fallbacks: ${m.fallbacks.join(', ')}`);
      }
    }),
  );
  program
    .command('provider')
    .description('providers')
    .command('add')
    .description('create or update a provider (base URL, encrypted credential)')
    .requiredOption('--name <name>')
    .requiredOption('--kind <kind>', 'openai | anthropic | cohere | azure | gemini | bedrock (docs/providers.md)')
    .option('--base-url <url>', 'e.g. https://api.openai.com/v1 (optional for bedrock and for a preset that knows its URL)')
    .option('--api-key <key>', 'platform credential (or env PROVIDER_API_KEY); stored encrypted')
    .option('--api-version <v>', 'azure: the api-version query value, or v1')
    .option('--region <region>', 'bedrock: the AWS region')
    .option('--preset <service>', 'openai: groq | mistral | deepseek | together | fireworks | xai | openrouter | vllm | ollama')
    .option('--passthrough', "callers may bring their own provider key (default: yes, except on the vllm and ollama presets)")
    .option('--no-passthrough', 'callers may not bring their own provider key (an upstream that checks no key)')
    .action((o: { name: string; kind: string; baseUrl?: string; apiKey?: string; apiVersion?: string; region?: string; preset?: string; passthrough?: boolean }) =>
      withServices(async (redis) => {
        const apiKey = o.apiKey ?? process.env.PROVIDER_API_KEY;
        const entry = {
          name: o.name,
          kind: o.kind,
          ...(o.baseUrl ? { base_url: o.baseUrl } : {}),
          ...(apiKey ? { api_key: apiKey } : {}),
          ...(o.apiVersion ? { api_version: o.apiVersion } : {}),
          ...(o.region ? { region: o.region } : {}),
          ...(o.preset ? { preset: o.preset } : {}),
          ...(o.passthrough !== undefined ? { passthrough: o.passthrough } : {}),
        };
        const { error } = providerSchema.validate(entry, { abortEarly: false });
        if (error) throw new Error(`provider ${o.name} not saved: ${error.details.map((d) => d.message).join('; ')}`);
        const n = await importCatalog(redis, { providers: [entry] });
        for (const w of n.warnings) console.error(`warning: ${w}`);
        console.log(`provider ${o.name} saved`);
      }),
    );
}
