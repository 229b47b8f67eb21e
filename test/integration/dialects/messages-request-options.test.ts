import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';

const V = { 'anthropic-version': '2023-06-01' };

/**
 * The top-level options of SDK 1.16's MessageCreateParamsBase: `service_tier` ('auto' |
 * 'standard_only'), `inference_geo` (string | null), `speed` ('standard' | 'fast' | null),
 * `container` (an id, or ContainerParams {id?, skills?: SkillParams[]} | null), `diagnostics`
 * ({previous_message_id?} | null). A value of another type or outside the list is refused 400
 * `invalid_request_error` on every upstream, before anything is sent, in Anthropic's words where
 * they are known; before, an Anthropic-native upstream was sent it (after a lane was used) and a
 * translated one dropped it. On a translated upstream, an `inference_geo` that keeps inference to one
 * geography and a `container` cannot be honoured and are refused 400 `unsupported_parameter`, as
 * `mcp_servers` is; an Anthropic-native upstream gets them as sent, but for the ids of its shared
 * workspace (a container's, a custom skill's, a previous message's: shared-account-ids.test.ts).
 */
describe('messages dialect: service_tier, inference_geo, speed, container and diagnostics', function () {
  this.timeout(30_000);
  let o: TestOrg;
  let h: Record<string, string>;
  let client: Anthropic;
  before(async () => {
    o = await buildOrg(env().redis);
    h = { ...keyHeader(o.key), ...V };
    client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  beforeEach(resetSim);
  const body = (model: string, extra: Record<string, unknown>) => ({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], ...extra });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown service_tier', { service_tier: 'priority' }, "service_tier: Input should be 'auto' or 'standard_only'"],
    ['a null service_tier (the SDK types it without null)', { service_tier: null }, "service_tier: Input should be 'auto' or 'standard_only'"],
    ['an unknown speed', { speed: 'turbo' }, "speed: Input should be 'standard' or 'fast'"],
    ['a speed of another type', { speed: 1 }, "speed: Input should be 'standard' or 'fast'"],
    ['an inference_geo of another type', { inference_geo: 1 }, 'inference_geo: Input should be a valid string'],
    ['a container of another type', { container: 7 }, 'container'],
    ['a container skill without its type', { container: { skills: [{ skill_id: 'pdf' }] } }, 'container'],
    ['a container skill of an unknown type', { container: { skills: [{ skill_id: 'pdf', type: 'builtin' }] } }, 'container'],
    ['diagnostics of another type', { diagnostics: 'yes' }, 'diagnostics'],
  ];
  for (const model of ['sim-claude', 'sim-chat']) {
    for (const [name, extra, words] of bad) {
      it(`${model}: ${name} is 400 invalid_request_error, nothing sent`, async () => {
        for (const stream of [false, true]) {
          const r = await call('POST', '/v1/messages', { headers: h, json: body(model, { ...extra, stream }) });
          expect(r.status, r.text).to.equal(400);
          expect(r.body.error.type).to.equal('invalid_request_error');
          expect(r.body.error.code).to.equal('invalid_request');
          expect(r.body.error.message).to.include(words);
        }
        expect(env().sim.log.entries).to.have.length(0);
      });
    }
  }

  it('count_tokens checks speed too', async () => {
    const r = await call('POST', '/v1/messages/count_tokens', { headers: h, json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], speed: 'turbo' } });
    expect(r.status, r.text).to.equal(400);
    expect(r.body.error.message).to.equal("speed: Input should be 'standard' or 'fast'");
  });

  it('an Anthropic-native upstream is sent every well-formed option as given', async () => {
    const options = {
      service_tier: 'standard_only',
      inference_geo: 'us',
      speed: 'fast',
      // a new container with Anthropic's own skills: a container id, a custom skill and a previous message id name
      // objects of the platform's shared workspace and are refused (shared-account-ids.test.ts)
      container: { skills: [{ skill_id: 'pdf', type: 'anthropic', version: 'latest' }] },
      diagnostics: { previous_message_id: null },
    };
    const m = await client.messages.create(body('sim-claude', options) as never);
    expect(m.type).to.equal('message');
    expect(env().sim.log.entries[0].body).to.deep.include(options);
  });

  it('a translated upstream serves what it can honour: any service_tier, speed, inference_geo global, diagnostics', async () => {
    for (const extra of [{ service_tier: 'auto' }, { service_tier: 'standard_only', speed: 'fast' }, { inference_geo: 'global' }, { inference_geo: null, container: null }, { diagnostics: { previous_message_id: 'msg_1' } }]) {
      const m = await client.messages.create(body('sim-chat', extra) as never);
      expect(m.type, JSON.stringify(extra)).to.equal('message');
    }
  });

  for (const [name, extra, param] of [
    ["inference_geo 'us'", { inference_geo: 'us' }, 'inference_geo'],
    ['a container id', { container: 'container_1' }, 'container'],
    ['a container with skills', { container: { skills: [{ skill_id: 'pdf', type: 'anthropic' }] } }, 'container'],
  ] as Array<[string, Record<string, unknown>, string]>) {
    it(`a translated upstream refuses ${name}: 400 unsupported_parameter naming it, JSON and streamed, nothing sent`, async () => {
      for (const stream of [false, true]) {
        const err = await client.messages.create({ ...body('sim-chat', extra), stream } as never).then(() => undefined, (e: unknown) => e);
        expect(err, `stream=${stream}`).to.be.instanceOf(Anthropic.BadRequestError);
        const e = (err as InstanceType<typeof Anthropic.BadRequestError>).error as { error: { code: string; type: string; message: string; param?: string } };
        expect(e.error).to.include({ code: 'unsupported_parameter', type: 'invalid_request_error' });
        expect(e.error.message).to.include(`\`${param}\``);
      }
      expect(env().sim.log.entries).to.have.length(0);
    });
  }
});
