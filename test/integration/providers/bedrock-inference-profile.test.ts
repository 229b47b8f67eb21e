import { expect } from 'chai';
import crypto from 'crypto';
import fs from 'fs';
import os from 'os';
import path from 'path';
import OpenAI from 'openai';
import { adminCall, adminSuite, buildPlatformKey, startAdmin } from '../../helpers/admin';
import { bedrockThinkingSuite, deniedKey, profilePath, signedReasoning, storedPool } from '../../helpers/bedrock-thinking-upstream';
import { importCatalog, upsertModel, upsertProvider } from '../../../shared/catalog/catalog-ops';
import { Model, Provider } from '../../../shared/db/models';
import { env } from '../../helpers/harness';
import { runToEnd } from '../../helpers/process';

const TURNS = [{ think: [signedReasoning('Let me think.')], then: [{ text: 'ok' }], stop: 'end_turn' }];
const name = (what: string) => `bedrock-${what}-${crypto.randomBytes(3).toString('hex')}`;
const hi = [{ role: 'user' as const, content: 'hi' }];
const arn = (id: string) => `arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/${id}`;

/**
 * A Bedrock deployment whose upstream is an application inference profile's ARN (which does not name
 * its model): the deployment's `base_model` tells the worker which model it is, so the request takes
 * that model's form while the ARN is what is called; without it the ARN is no known family.
 */
describe('bedrock: application inference profiles and base_model', function () {
  this.timeout(30_000);
  const s = bedrockThinkingSuite(TURNS, { profiled: [arn('opus46abc'), 'anthropic.claude-opus-4-6-v1'], bare: arn('bare123xyz') });

  it("with base_model: the ARN is called, and the request takes the base model's form (Claude 4.6: adaptive thinking, output_config.effort)", async () => {
    const r = await s.openai.chat.completions.create({ model: s.models.profiled, messages: hi, reasoning_effort: 'high' });
    expect(s.up.received[0].path).to.equal(`/model/${encodeURIComponent(arn('opus46abc'))}/converse`);
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    expect((r.choices[0].message as { reasoning_content?: string }).reasoning_content).to.equal('Let me think.');
    // Claude's refusals with thinking on hold too: 400 naming the field, nothing sent
    const err = await s.openai.chat.completions.create({ model: s.models.profiled, messages: hi, reasoning_effort: 'high', temperature: 0.2 }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('temperature');
    expect(s.up.received).to.have.length(1);
    const thinking = (await s.anthropic.models.retrieve(s.models.profiled)).capabilities!.thinking;
    expect(thinking).to.deep.equal({ supported: true, types: { adaptive: { supported: true }, enabled: { supported: true } } });
  });

  it('without base_model: the ARN names no family, so reasoning_effort is 400 naming it and thinking is not reported', async () => {
    const err = await s.openai.chat.completions.create({ model: s.models.bare, messages: hi, reasoning_effort: 'high' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('reasoning_effort');
    expect(s.up.received).to.have.length(0);
    expect((await s.anthropic.models.retrieve(s.models.bare)).capabilities!.thinking!.supported).to.equal(false);
  });

  it('the management API takes base_model on a bedrock deployment and refuses it on another kind (400 invalid_request), as the catalog file does', async () => {
    const admin = await startAdmin();
    try {
      const { key } = await buildPlatformKey();
      const other = name('openai');
      await upsertProvider({ name: other, kind: 'openai', base_url: 'http://127.0.0.1:9/v1' } as never);
      const pool = (provider: string) => ({ model: s.models.bare, deployments: [{ name: 'p', provider, upstream: arn('bare123xyz'), base_model: 'anthropic.claude-sonnet-4-6' }] });
      const refused = await adminCall(admin.url, key, 'POST', '/admin/v1/inference-model-pools', pool(other));
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.error.code).to.equal('invalid_request');
      expect(refused.body.error.message).to.include('base_model');
      const file = { id: name('file'), deployments: pool(other).deployments, capabilities: { chat: true } };
      expect(String(await upsertModel(file).catch((e: unknown) => e))).to.include('base_model is read on bedrock deployments only');
      const set = await adminCall(admin.url, key, 'POST', '/admin/v1/inference-model-pools', pool(s.models.bare));
      expect(set.status, set.text).to.equal(201);
      expect(set.body.deployments[0]).to.include({ base_model: 'anthropic.claude-sonnet-4-6' });
    } finally {
      await admin.close();
    }
    s.up.profiles.set(arn('bare123xyz'), 'anthropic.claude-sonnet-4-6');
    await s.openai.chat.completions.create({ model: s.models.bare, messages: hi, reasoning_effort: 'low' });
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } });
  });
});

/**
 * A deployment on an application inference profile's ARN written without `base_model`: the gateway
 * asks AWS's control plane (GetInferenceProfile, through @aws-sdk/client-bedrock with the provider's
 * own credential and region; here the endpoint's local control plane, AWS's JSON shape) and stores the
 * foundation model it lists. Where AWS does not tell, the write stands with a warning.
 */
describe('bedrock: base_model read from GetInferenceProfile', function () {
  this.timeout(60_000);
  const s = bedrockThinkingSuite(TURNS, {});
  const admin = adminSuite();
  const SIGV4 = { access_key_id: 'AKIDPROFILEREADER', secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYPROFILEKEY' };
  const DENIED = deniedKey();
  const stored = storedPool;

  it('management API: a model on a profile ARN gets the foundation model AWS lists (SigV4, the platform credential), and is served as that Claude model', async () => {
    const provider = name('signed');
    await s.up.provider(provider, DENIED); // the catalog key is refused: the platform credential is the one used
    s.up.denied.add(DENIED);
    const providerId = (await Provider.findOne({ where: { name: provider } }))!.id;
    const cred = await admin.call('POST', '/admin/v1/platform-credentials', { provider_id: providerId, secret: JSON.stringify(SIGV4) });
    expect(cred.status, cred.text).to.equal(201);
    const profile = arn(`opus${crypto.randomBytes(4).toString('hex')}`);
    s.up.profile(profile, 'anthropic.claude-opus-4-6-v1'); // listed in three regions, one model id

    const id = name('model');
    const created = await admin.call('POST', '/admin/v1/inference-models', { public_id: id, provider_id: providerId, upstream_name: profile, capabilities: { chat: true } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.deployments).to.deep.equal([{ name: provider, provider, upstream: profile, base_model: 'anthropic.claude-opus-4-6-v1' }]);
    expect(created.body).to.not.have.property('warnings');
    expect(await stored(id)).to.deep.equal(created.body.deployments);

    // the request the SDK sent: GetInferenceProfile with the ARN URI-encoded, SigV4 for bedrock in the provider's region
    expect(s.up.control).to.have.length(1);
    const [sent] = s.up.control;
    expect(sent.method).to.equal('GET');
    expect(sent.path).to.equal(profilePath(profile));
    expect(sent.headers.authorization).to.match(/^AWS4-HMAC-SHA256 Credential=AKIDPROFILEREADER\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}$/);
    expect(sent.headers['x-amz-date']).to.match(/^\d{8}T\d{6}Z$/);

    // served as Claude Opus 4.6: its request form, its refusals, its model info
    await s.openai.chat.completions.create({ model: id, messages: hi, reasoning_effort: 'high' });
    expect(s.up.received[0].path).to.equal(`/model/${encodeURIComponent(profile)}/converse`);
    expect(s.up.received[0].body.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    const err = await s.openai.chat.completions.create({ model: id, messages: hi, reasoning_effort: 'high', temperature: 0.2 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).to.equal('temperature');
    expect(s.up.received).to.have.length(1);
    const thinking = (await s.anthropic.models.retrieve(id)).capabilities!.thinking;
    expect(thinking).to.deep.equal({ supported: true, types: { adaptive: { supported: true }, enabled: { supported: true } } });
  });

  it('AccessDenied: the pool is saved without base_model and the answer warns why (never quoting the key); the ARN then names no family', async () => {
    const provider = name('denied');
    await s.up.provider(provider, DENIED);
    s.up.denied.add(DENIED);
    const profile = arn(`den${crypto.randomBytes(4).toString('hex')}`);
    s.up.profile(profile, 'anthropic.claude-opus-4-6-v1');
    const id = name('model');
    await upsertModel({ id, deployments: [{ name: 'first', provider, upstream: profile, base_model: 'anthropic.claude-opus-4-6-v1' }], capabilities: { chat: true } });
    expect(s.up.control).to.have.length(0);

    const row = (await Model.findOne({ where: { publicId: id } }))!;
    const set = await admin.call('PATCH', `/admin/v1/inference-model-pools/${row.id}`, { deployments: [{ name: 'team', provider, upstream: profile }] });
    expect(set.status, set.text).to.equal(200);
    expect(set.body.deployments).to.deep.equal([{ name: 'team', provider, upstream: profile }]);
    expect(await stored(id)).to.deep.equal(set.body.deployments);
    expect(set.body.warnings).to.have.length(1);
    const [w] = set.body.warnings;
    expect(w.code).to.equal('base_model_unresolved');
    expect(w.param).to.equal('deployments[0].base_model');
    expect(w.message).to.include("Deployment 'team' was saved without base_model");
    expect(w.message).to.include('AccessDeniedException');
    expect(w.message).to.include('bedrock:GetInferenceProfile permission');
    expect(w.message).to.include('give base_model');
    expect(set.text).to.not.include(DENIED);
    expect(s.up.control.map((c) => [c.method, c.path, c.headers.authorization])).to.deep.equal([['GET', profilePath(profile), `Bearer ${DENIED}`]]);

    const refused = await s.openai.chat.completions.create({ model: id, messages: hi, reasoning_effort: 'high' }).catch((e: unknown) => e);
    expect((refused as InstanceType<typeof OpenAI.APIError>).param).to.equal('reasoning_effort');
  });

  it('an explicit base_model is kept and nothing is asked for it; its sibling without one is asked', async () => {
    const provider = name('explicit');
    await s.up.provider(provider);
    const given = arn(`giv${crypto.randomBytes(4).toString('hex')}`);
    const asked = arn(`ask${crypto.randomBytes(4).toString('hex')}`);
    s.up.profile(given, 'anthropic.claude-opus-4-6-v1'); // AWS would say Opus: the operator's Sonnet stands
    s.up.profile(asked, 'anthropic.claude-opus-4-6-v1');
    const id = name('model');
    await upsertModel({ id, provider, upstream: 'anthropic.claude-3-5-haiku-20241022-v1:0', capabilities: { chat: true } });
    const deployments = [
      { name: 'given', provider, upstream: given, base_model: 'anthropic.claude-sonnet-4-6' },
      { name: 'asked', provider, upstream: asked },
    ];
    const set = await admin.call('POST', '/admin/v1/inference-model-pools', { model: id, deployments });
    expect(set.status, set.text).to.equal(201);
    expect(set.body.deployments).to.deep.equal([deployments[0], { ...deployments[1], base_model: 'anthropic.claude-opus-4-6-v1' }]);
    expect(s.up.control.map((c) => c.path)).to.deep.equal([profilePath(asked)]);
  });

  it('catalog import (and `gateway catalog import`): resolved where AWS lists one model, warned where it refuses or lists different models', async () => {
    const ok = name('file');
    const denied = name('file-denied');
    await s.up.provider(ok);
    await s.up.provider(denied, DENIED);
    s.up.denied.add(DENIED);
    const cross = arn(`crs${crypto.randomBytes(4).toString('hex')}`);
    const mixed = arn(`mix${crypto.randomBytes(4).toString('hex')}`);
    s.up.profile(cross, 'anthropic.claude-sonnet-4-6');
    s.up.profile(mixed, 'anthropic.claude-sonnet-4-6', 'amazon.nova-pro-v1:0');
    const ids = { cross: name('cross'), mixed: name('mixed'), denied: name('denied') };
    const models = [
      { id: ids.cross, provider: ok, upstream: cross, capabilities: { chat: true } },
      { id: ids.mixed, deployments: [{ name: 'm', provider: ok, upstream: mixed }], capabilities: { chat: true } },
      { id: ids.denied, provider: denied, upstream: cross, capabilities: { chat: true } },
    ];
    const result = await importCatalog(env().redis, { models });
    expect(await stored(ids.cross)).to.deep.equal([{ name: ok, provider: ok, upstream: cross, base_model: 'anthropic.claude-sonnet-4-6' }]);
    expect(await stored(ids.mixed)).to.deep.equal([{ name: 'm', provider: ok, upstream: mixed }]);
    expect(await stored(ids.denied)).to.deep.equal([{ name: denied, provider: denied, upstream: cross }]);
    expect(result.warnings).to.have.length(2);
    expect(result.warnings[0]).to.include(`model '${ids.mixed}': Deployment 'm' was saved without base_model`).and.include('different models (anthropic.claude-sonnet-4-6, amazon.nova-pro-v1:0)');
    expect(result.warnings[1]).to.include(`model '${ids.denied}'`).and.include('AccessDeniedException').and.not.include(DENIED);
    expect(s.up.control.map((c) => c.path)).to.deep.equal([cross, mixed, cross].map(profilePath));

    // the CLI prints the warning and saves the model all the same
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-profile-'));
    const file = path.join(dir, 'catalog.json');
    const viaCli = name('cli');
    fs.writeFileSync(file, JSON.stringify({ models: [{ id: viaCli, provider: denied, upstream: cross, capabilities: { chat: true } }] }));
    try {
      const run = await runToEnd('scripts/cli.js', ['catalog', 'import', file], {}, 60_000);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.include('imported 0 provider(s), 1 model(s)');
      expect(run.stderr).to.include(`warning: model '${viaCli}': Deployment '${denied}' was saved without base_model`).and.include('AccessDeniedException').and.not.include(DENIED);
      expect(await stored(viaCli)).to.deep.equal([{ name: denied, provider: denied, upstream: cross }]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
