import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { AzureOpenAI } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { hitsByUpstream, poolModel, poolStateOf, rndId, simDeployment } from '../../helpers/pool-models';
import { decide, expectBilledTo, validBody, walletOf } from '../systemone/helpers';
import { credit } from '../../../shared/billing/wallet';
import { Model } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';
import type { DeploymentSpec } from '../../../shared/catalog/deployments';

const LIMITS = { max_state_bytes: 10_000, max_request_bytes: 100_000, max_questions: 8, max_input_tokens: 10_000 };
const KEY = 'azure-decision-key-0123';
/** The API version of Azure's own example request (test/fixtures/vendor/azure/README.md). */
const VERSION: string = JSON.parse(fs.readFileSync(path.resolve('test/fixtures/vendor/azure/chat_completions.json'), 'utf8')).parameters['api-version'];

/** Decision models whose pools hold Azure OpenAI deployments, alone or beside OpenAI ones. */
describe('model pools: Azure OpenAI deployments of decision models', () => {
  let o: TestOrg;
  let azure: string;
  let azureV1: string;
  const made: string[] = [];
  const decisionPool = async (deployments: DeploymentSpec[]) => {
    const id = await poolModel(deployments, { capabilities: { decision: true }, limits: LIMITS });
    made.push(id);
    return id;
  };
  /** An Azure deployment on the simulator's Azure routes: deployment name `<name>-<id>`. */
  const azureDeployment = (name: string, provider = azure): DeploymentSpec => ({ name, provider, upstream: `${name}-${rndId()}` });

  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis, { policies: { systemone: 'metered' }, laneOverrides: { 'systemone:interactive': 32 } });
    await credit(o.org.id, 50_000_000);
    azure = `azure-decide-${rndId()}`;
    azureV1 = `azure-decide-v1-${rndId()}`;
    await upsertProvider({ name: azure, kind: 'azure', base_url: env().simUrl, api_key: KEY, api_version: VERSION });
    await upsertProvider({ name: azureV1, kind: 'azure', base_url: `${env().simUrl}/openai/`, api_key: KEY, api_version: 'v1' });
  });
  afterEach(async () => {
    expect((await walletOf(o.org.id)).reserved, 'no reservation left held').to.equal(0);
  });
  after(async () => {
    await Model.destroy({ where: { publicId: made } });
    await bumpEpoch(env().redis);
  });

  it("a mixed pool serves from both kinds; the Azure call goes to the deployment URL with the example's api-version and the api-key header, as the official AzureOpenAI client sends it", async function () {
    this.timeout(30_000);
    const oa = simDeployment('oa');
    const az = azureDeployment('az');
    const model = await decisionPool([oa, az]);
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(...(await Promise.all(Array.from({ length: 6 }, () => decide(o.key, validBody({ model }))))));
    for (const r of replies) expect(r.status, r.text).to.equal(200);
    const served = replies.map((r) => r.headers.get('x-service-deployment'));
    expect(served.filter((d) => d === 'az').length, 'the Azure deployment served some').to.be.above(0);
    expect(served.filter((d) => d === 'oa').length, 'the OpenAI deployment served some').to.be.above(0);
    const hits = hitsByUpstream();
    expect((hits.get(oa.upstream) ?? 0) + (hits.get(az.upstream) ?? 0)).to.equal(24);

    const azureCalls = env().sim.log.entries.filter((e) => e.model === az.upstream);
    for (const sent of azureCalls) {
      expect(sent.path).to.equal(`/openai/deployments/${az.upstream}/chat/completions`);
      expect(sent.query).to.deep.equal({ 'api-version': VERSION });
      expect(sent.apiKeyHeader).to.equal(KEY);
      expect(sent.authorization, 'no bearer token goes to Azure').to.equal(undefined);
      const body = sent.body as Record<string, unknown>;
      expect((body.response_format as { type: string }).type).to.equal('json_schema');
      expect([body.logprobs, body.top_logprobs, body.temperature]).to.deep.equal([true, 5, 0]);
    }
    for (const sent of env().sim.log.entries.filter((e) => e.model === oa.upstream)) {
      expect(sent.path).to.equal('/v1/chat/completions');
      expect(sent.apiKeyHeader).to.equal(undefined);
    }
    // the official client's call to the same deployment: the same path, query and key header
    const client = new AzureOpenAI({ endpoint: env().simUrl, apiKey: KEY, apiVersion: VERSION, maxRetries: 0 });
    await client.chat.completions.create({ model: az.upstream, messages: [{ role: 'user', content: 'sdk' }] });
    const sdk = env().sim.log.entries.at(-1)!;
    expect([azureCalls[0].path, azureCalls[0].query, azureCalls[0].apiKeyHeader]).to.deep.equal([sdk.path, sdk.query, sdk.apiKeyHeader]);
  });

  it('the OpenAI deployment failing (500): every request answered by the Azure deployment, and the headers, the usage event, the Activity row and the charge name it', async function () {
    this.timeout(30_000);
    const oa = simDeployment('oa');
    const az = azureDeployment('az');
    env().sim.knobs.set(oa.upstream, { status: 500 });
    const model = await decisionPool([oa, az]);
    const replies = await Promise.all(Array.from({ length: 8 }, () => decide(o.key, validBody({ model }))));
    for (const r of replies) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.answers.paid.type).to.equal('noul');
      expect(r.headers.get('x-service-deployment')).to.equal('az');
      expect(Number(r.headers.get('x-service-attempts'))).to.be.within(1, 2);
    }
    expect(hitsByUpstream().get(oa.upstream) ?? 0, 'cooled down after its failures: not every request tried it').to.be.below(8);
    await expectBilledTo(replies[0], 'az');
  });

  it('the Azure deployment failing (500) is cooled down and the request retried on the OpenAI one at once', async () => {
    const az = azureDeployment('az', azure);
    const oa = simDeployment('oa', { priority: 1 });
    env().sim.knobs.set(az.upstream, { status: 500 });
    const model = await decisionPool([az, oa]);
    const r = await decide(o.key, validBody({ model }));
    expect(r.status, r.text).to.equal(200);
    expect([r.headers.get('x-service-deployment'), r.headers.get('x-service-attempts')]).to.deep.equal(['oa', '2']);
    expect(env().sim.log.entries.map((e) => e.model), 'the Azure deployment first (the better tier), then the OpenAI one').to.deep.equal([az.upstream, oa.upstream]);
    const [azState] = await poolStateOf(model, ['az']);
    expect(azState.fails, "the Azure deployment's failure counted for every worker").to.equal(1);
  });

  it('a pool of Azure deployments only (the primary Azure): dated and v1 URLs, the deployment named in the v1 body', async () => {
    const dated = azureDeployment('dated');
    const v1 = azureDeployment('v1', azureV1);
    const model = await decisionPool([dated, v1]);
    const seen = new Set<string>();
    for (let i = 0; i < 12 && seen.size < 2; i++) {
      const r = await decide(o.key, validBody({ model }));
      expect(r.status, r.text).to.equal(200);
      seen.add(r.headers.get('x-service-deployment')!);
    }
    expect([...seen].sort()).to.deep.equal(['dated', 'v1']);
    const v1Call = env().sim.log.entries.find((e) => e.path === '/openai/v1/chat/completions')!;
    expect(v1Call.query, 'no api-version on the v1 API').to.deep.equal({});
    expect([v1Call.model, v1Call.apiKeyHeader]).to.deep.equal([v1.upstream, KEY]);
    const datedCall = env().sim.log.entries.find((e) => e.path === `/openai/deployments/${dated.upstream}/chat/completions`)!;
    expect(datedCall.query).to.deep.equal({ 'api-version': VERSION });
  });
});
