import { expect } from 'chai';
import crypto from 'crypto';
import OpenAI from 'openai';
import { adminSuite } from '../../helpers/admin';
import { bedrockThinkingSuite, deniedKey, profilePath, signedReasoning, storedPool } from '../../helpers/bedrock-thinking-upstream';
import { importCatalog, upsertModel, upsertProvider } from '../../../shared/catalog/catalog-ops';
import { Provider } from '../../../shared/db/models';
import { dropScriptedModel } from '../../helpers/scripted-upstream';
import { env } from '../../helpers/harness';
import { runToEnd } from '../../helpers/process';

const TURNS = [{ think: [signedReasoning('Let me think.')], then: [{ text: 'ok' }], stop: 'end_turn' }];
const name = (what: string) => `bedrock-${what}-${crypto.randomBytes(3).toString('hex')}`;
const arn = (what: string) => `arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/${what}${crypto.randomBytes(4).toString('hex')}`;
const hi = [{ role: 'user' as const, content: 'hi' }];
const OPUS = 'anthropic.claude-opus-4-6-v1';
const SONNET = 'anthropic.claude-sonnet-4-6';

/**
 * A deployment on an application inference profile's ARN saved without `base_model` because AWS did
 * not tell (the credential lacked bedrock:GetInferenceProfile, a wrong base_url): when the operator
 * then changes the provider's credential, region or base_url (management API: providers,
 * platform-credentials; the catalog file and `gateway provider add`), the gateway asks again for
 * every such deployment of the provider (one GetInferenceProfile per ARN), saves what it learns, and
 * the write's answer warns of what is still unknown. The provider write stands either way.
 */
describe('bedrock: base_model asked again when the provider changes', function () {
  this.timeout(60_000);
  const s = bedrockThinkingSuite(TURNS, {});
  const admin = adminSuite();
  const SIGV4 = { access_key_id: 'AKIDFIXEDREADER', secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYFIXEDKEY0' };
  const DENIED = deniedKey();
  const providerId = async (provider: string) => (await Provider.findOne({ where: { name: provider } }))!.id;
  before(() => s.up.denied.add(DENIED));

  /** A model on `provider` whose pool is `deployments` (saved as written: the credential is refused). */
  async function pool(provider: string, deployments: { name: string; upstream: string; base_model?: string }[]): Promise<string> {
    const id = name('model');
    await upsertModel({ id, deployments: deployments.map((d) => ({ provider, ...d })), capabilities: { chat: true } });
    return id;
  }

  it('a platform credential that may read the profile: the deployments without base_model get it (one call per ARN), no warning, and the worker serves the model as that Claude', async () => {
    const provider = name('fixed');
    await s.up.provider(provider, DENIED);
    const [shared, given] = [arn('shr'), arn('giv')];
    s.up.profile(shared, OPUS);
    s.up.profile(given, OPUS); // AWS would say Opus: the operator's Sonnet stands
    const one = await pool(provider, [
      { name: 'team', upstream: shared },
      { name: 'given', upstream: given, base_model: SONNET },
    ]);
    const two = await pool(provider, [{ name: 'other', upstream: shared }]);
    expect(await storedPool(one)).to.deep.equal([{ name: 'team', provider, upstream: shared }, { name: 'given', provider, upstream: given, base_model: SONNET }]);
    const refused = await s.openai.chat.completions.create({ model: two, messages: hi, reasoning_effort: 'high' }).catch((e: unknown) => e);
    expect((refused as InstanceType<typeof OpenAI.APIError>).param).to.equal('reasoning_effort');
    s.up.control = [];

    const cred = await admin.call('POST', '/admin/v1/platform-credentials', { provider_id: await providerId(provider), secret: JSON.stringify(SIGV4) });
    expect(cred.status, cred.text).to.equal(201);
    expect(cred.body).to.not.have.property('warnings');
    expect(s.up.control.map((c) => c.path)).to.deep.equal([profilePath(shared)]);
    expect(s.up.control[0].headers.authorization).to.match(/^AWS4-HMAC-SHA256 Credential=AKIDFIXEDREADER\//);
    expect(await storedPool(one)).to.deep.equal([{ name: 'team', provider, upstream: shared, base_model: OPUS }, { name: 'given', provider, upstream: given, base_model: SONNET }]);
    expect(await storedPool(two)).to.deep.equal([{ name: 'other', provider, upstream: shared, base_model: OPUS }]);

    // the worker's catalog saw the write: the request takes Claude Opus 4.6's form
    await s.openai.chat.completions.create({ model: two, messages: hi, reasoning_effort: 'high' });
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });

    // nothing left to ask: a later change asks nothing
    s.up.control = [];
    const again = await admin.call('PATCH', `/admin/v1/providers/${await providerId(provider)}`, { settings: { region: 'us-west-2' } });
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.not.have.property('warnings');
    expect(s.up.control).to.have.length(0);
  });

  it('still refused: the provider write stands (200/201), the answer warns per deployment naming its pool, and the deployment is unchanged; never the credential', async () => {
    const provider = name('still');
    await s.up.provider(provider, DENIED);
    const profile = arn('den');
    s.up.profile(profile, OPUS);
    const id = await pool(provider, [
      { name: 'given', upstream: arn('giv'), base_model: SONNET },
      { name: 'team', upstream: profile },
    ]);
    const before = await storedPool(id);
    s.up.control = [];
    const pid = await providerId(provider);

    const moved = await admin.call('PATCH', `/admin/v1/providers/${pid}`, { settings: { region: 'us-east-2' } });
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body.settings).to.deep.equal({ region: 'us-east-2' });
    expect((await Provider.findByPk(pid))!.settings).to.deep.equal({ region: 'us-east-2' });
    expect(moved.body.warnings).to.have.length(1);
    const [w] = moved.body.warnings;
    expect(w.code).to.equal('base_model_unresolved');
    expect(w.param).to.equal(`pools[${JSON.stringify(id)}].deployments[1].base_model`);
    expect(w.message).to.include(`Deployment 'team' of model '${id}' is still without base_model`).and.include('AccessDeniedException').and.include('give base_model');
    expect(moved.text).to.not.include(DENIED);
    expect(s.up.control.map((c) => [c.path, c.headers.authorization])).to.deep.equal([[profilePath(profile), `Bearer ${DENIED}`]]);
    expect(s.up.control.map((c) => c.path)).to.not.include(profilePath(before[0].upstream));
    expect(await storedPool(id)).to.deep.equal(before);

    // a platform credential refused as well: created all the same, with the warning
    const other = deniedKey();
    s.up.denied.add(other);
    const cred = await admin.call('POST', '/admin/v1/platform-credentials', { provider_id: pid, secret: other });
    expect(cred.status, cred.text).to.equal(201);
    expect(cred.body.secret_hint).to.equal(other.slice(-4));
    expect(cred.body.warnings.map((x: { param: string }) => x.param)).to.deep.equal([w.param]);
    expect(cred.text).to.not.include(other);
    // its label alone changes no credential: nothing asked
    s.up.control = [];
    const labelled = await admin.call('PATCH', `/admin/v1/platform-credentials/${cred.body.id}`, { label: 'team a' });
    expect(labelled.status, labelled.text).to.equal(200);
    expect(labelled.body).to.not.have.property('warnings');
    expect(s.up.control).to.have.length(0);
    // its secret replaced by one that may read: resolved
    const fixed = await admin.call('PATCH', `/admin/v1/platform-credentials/${cred.body.id}`, { secret: JSON.stringify(SIGV4) });
    expect(fixed.status, fixed.text).to.equal(200);
    expect(fixed.body).to.not.have.property('warnings');
    expect(await storedPool(id)).to.deep.equal([before[0], { name: 'team', provider, upstream: profile, base_model: OPUS }]);
  });

  it("the platform credential deleted: the provider's own key is the one asked, and may read", async () => {
    const provider = name('own');
    await s.up.provider(provider); // its own key may read the profile
    const pid = await providerId(provider);
    const cred = await admin.call('POST', '/admin/v1/platform-credentials', { provider_id: pid, secret: DENIED });
    expect(cred.status, cred.text).to.equal(201);
    const profile = arn('own');
    s.up.profile(profile, OPUS);
    const id = await pool(provider, [{ name: 'team', upstream: profile }]);
    expect(await storedPool(id)).to.deep.equal([{ name: 'team', provider, upstream: profile }]);
    s.up.control = [];
    const gone = await admin.call('DELETE', `/admin/v1/platform-credentials/${cred.body.id}`);
    expect(gone.status, gone.text).to.equal(200);
    expect(gone.body).to.include({ deleted: true }).and.not.have.property('warnings');
    expect(s.up.control.map((c) => [c.path, c.headers.authorization])).to.deep.equal([[profilePath(profile), 'Bearer ABSKscriptedbedrockkey']]);
    expect(await storedPool(id)).to.deep.equal([{ name: 'team', provider, upstream: profile, base_model: OPUS }]);
  });

  it('a base_url that reached no control plane, fixed through the providers family: resolved', async () => {
    const provider = name('url');
    await upsertProvider({ name: provider, kind: 'bedrock', base_url: 'http://127.0.0.1:9', region: 'us-east-1', api_key: 'ABSKscriptedbedrockkey' });
    const profile = arn('url');
    s.up.profile(profile, SONNET);
    const id = name('model');
    const saved = await upsertModel({ id, deployments: [{ name: 'team', provider, upstream: profile }], capabilities: { chat: true } });
    try {
      expect(saved.warnings).to.have.length(1);
      expect(await storedPool(id)).to.deep.equal([{ name: 'team', provider, upstream: profile }]);
      const set = await admin.call('PATCH', `/admin/v1/providers/${await providerId(provider)}`, { base_url: s.up.url });
      expect(set.status, set.text).to.equal(200);
      expect(set.body).to.not.have.property('warnings');
      expect(s.up.control.map((c) => c.path)).to.deep.equal([profilePath(profile)]);
      expect(await storedPool(id)).to.deep.equal([{ name: 'team', provider, upstream: profile, base_model: SONNET }]);
    } finally {
      await dropScriptedModel(provider);
    }
  });

  it('a non-bedrock provider change, or a bedrock write that changes no credential, region or base_url, asks nothing', async () => {
    const openai = name('openai');
    await upsertProvider({ name: openai, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' });
    const id = name('model');
    await upsertModel({ id, deployments: [{ name: 'x', provider: openai, upstream: arn('oai') }], capabilities: { chat: true } });
    try {
      const set = await admin.call('PATCH', `/admin/v1/providers/${await providerId(openai)}`, { base_url: s.up.url });
      expect(set.status, set.text).to.equal(200);
      expect(set.body).to.not.have.property('warnings');
      const cred = await admin.call('POST', '/admin/v1/platform-credentials', { provider_id: await providerId(openai), secret: 'sk-other' });
      expect(cred.status, cred.text).to.equal(201);
      expect(cred.body).to.not.have.property('warnings');

      const provider = name('same');
      await s.up.provider(provider, DENIED);
      const profile = arn('same');
      s.up.profile(profile, OPUS);
      await pool(provider, [{ name: 'team', upstream: profile }]);
      s.up.control = [];
      const same = await admin.call('PATCH', `/admin/v1/providers/${await providerId(provider)}`, { settings: { region: 'us-east-1' }, base_url: s.up.url });
      expect(same.status, same.text).to.equal(200);
      expect(same.body).to.not.have.property('warnings');
      expect(s.up.control).to.have.length(0);
    } finally {
      await dropScriptedModel(openai);
    }
  });

  it('the catalog file and `gateway provider add`: a new key asks again (warning printed while refused), each model of the file asked once', async () => {
    const provider = name('file');
    await s.up.provider(provider, DENIED);
    const [stored1, inFile] = [arn('sto'), arn('fil')];
    s.up.profile(stored1, OPUS);
    s.up.profile(inFile, SONNET);
    const id = await pool(provider, [{ name: 'team', upstream: stored1 }]);
    s.up.control = [];

    const other = deniedKey();
    s.up.denied.add(other);
    const fileModel = name('filemodel');
    const entry = { name: provider, kind: 'bedrock', base_url: s.up.url, region: 'us-east-1' };
    const refused = await importCatalog(env().redis, { providers: [{ ...entry, api_key: other }], models: [{ id: fileModel, provider, upstream: inFile, capabilities: { chat: true } }] });
    expect(refused.warnings).to.have.length(2);
    expect(refused.warnings[0]).to.include(`model '${fileModel}': Deployment '${provider}' was saved without base_model`);
    expect(refused.warnings[1]).to.include(`provider '${provider}': Deployment 'team' of model '${id}' is still without base_model`).and.include('AccessDeniedException').and.not.include(other);
    expect(s.up.control.map((c) => c.path).sort()).to.deep.equal([profilePath(inFile), profilePath(stored1)].sort());

    // `gateway provider add` with a key refused as well: saved, the warnings on stderr
    const cli = (key: string) => runToEnd('scripts/cli.js', ['provider', 'add', '--name', provider, '--kind', 'bedrock', '--region', 'us-east-1', '--base-url', s.up.url, '--api-key', key], {}, 60_000);
    const warned = await cli(DENIED);
    expect(warned.code, warned.stderr).to.equal(0);
    expect(warned.stdout).to.include(`provider ${provider} saved`);
    expect(warned.stderr).to.include(`warning: provider '${provider}': Deployment 'team' of model '${id}' is still without base_model`).and.include(`warning: provider '${provider}': Deployment '${provider}' of model '${fileModel}' is still`).and.not.include(DENIED);
    expect(await storedPool(id)).to.deep.equal([{ name: 'team', provider, upstream: stored1 }]);

    // with a key that may read: both resolved, nothing printed but the save
    s.up.control = [];
    const run = await cli('ABSKscriptedbedrockkey');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.include(`provider ${provider} saved`);
    expect(run.stderr).to.not.include('warning:');
    expect(s.up.control.map((c) => c.path).sort()).to.deep.equal([profilePath(inFile), profilePath(stored1)].sort());
    expect(await storedPool(id)).to.deep.equal([{ name: 'team', provider, upstream: stored1, base_model: OPUS }]);
    expect(await storedPool(fileModel)).to.deep.equal([{ name: provider, provider, upstream: inFile, base_model: SONNET }]);
  });
});
