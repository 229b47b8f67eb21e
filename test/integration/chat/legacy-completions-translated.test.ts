import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { TRANSLATED_MODELS, translatedCompletionsSuite } from '../../helpers/translated-completions';
import { leasesFreed } from '../../helpers/leases';

type BadRequest = InstanceType<typeof OpenAI.BadRequestError>;
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as BadRequest);
/** A body the SDK's CreateCompletionRequest type does not know (the SDK sends extra fields as given). */
type Params = OpenAI.CompletionCreateParamsNonStreaming;
const loose = (b: Record<string, unknown>) => b as unknown as Params;

/**
 * Legacy `POST /v1/completions` on models translated to non-OpenAI upstreams (Anthropic, Gemini,
 * Bedrock), through the official openai client's `completions.create`: a field outside OpenAI's
 * CreateCompletionRequest is refused as OpenAI refuses it, the request fields the translation can
 * carry reach the upstream, and what the kind's adapter refuses is refused before any upstream call
 * or billing (docs/dialects.md, "Chat completions on an Anthropic-native upstream").
 */
describe('legacy completions on translated upstreams: OpenAI CreateCompletionRequest fields', () => {
  const s = translatedCompletionsSuite();

  it('refuses a chat-only or unknown field 400 "Unrecognized request argument supplied", JSON and streamed, nothing sent or billed', async () => {
    const before = await s.billed();
    const extras: Array<Record<string, unknown>> = [
      { reasoning_effort: 'bogus' },
      { reasoning_effort: 'high' },
      { max_completion_tokens: 20 },
      { messages: [{ role: 'user', content: 'hi' }] },
      { response_format: { type: 'json_object' } },
      { top_k: 5 },
    ];
    for (const model of TRANSLATED_MODELS) {
      for (const extra of extras) {
        const [field] = Object.keys(extra);
        for (const stream of [false, true]) {
          const err = await refusal(s.client.completions.create(loose({ model, prompt: 'say hi', max_tokens: 5, stream, ...extra })));
          expect(err, `${model} ${field} stream=${stream}`).to.be.instanceOf(OpenAI.BadRequestError);
          expect(err!.error, `${model} ${field}`).to.deep.equal({
            code: 'invalid_request',
            type: 'invalid_request_error',
            param: field,
            message: `Unrecognized request argument supplied: ${field}. Legacy completions on this model take the fields of OpenAI's CreateCompletionRequest only.`,
          });
        }
      }
    }
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    expect(await s.billed()).to.equal(before);
    expect(await leasesFreed(env().gw.ctx.leases, s.o.org.id, 'chat', 'interactive')).to.equal(true);
  });

  it('takes every CreateCompletionRequest field it can carry; on an OpenAI-compatible model other fields still go upstream', async () => {
    const ok = await s.client.completions.create({ model: 'sim-claude', prompt: 'all fields', max_tokens: 20, temperature: 0.5, top_p: 0.9, stop: ['zzz'], user: 'u-1', seed: 3, frequency_penalty: 0, presence_penalty: 0, best_of: 1, n: 1, echo: false, logprobs: null, logit_bias: null, suffix: null, stream: false });
    expect(ok.object).to.equal('text_completion');
    expect(ok.choices[0].text).to.include('all fields');
    // an OpenAI-compatible upstream gets the request as sent: its own fields are its own to take or refuse
    const compat = await s.client.completions.create(loose({ model: 'sim-chat', prompt: 'compat', max_tokens: 5, top_k: 5 }));
    expect(compat.object).to.equal('text_completion');
    expect((env().sim.log.entries[1].body as Record<string, unknown>).top_k).to.equal(5);
  });

  it('Gemini: seed and the penalties reach generationConfig (they were dropped)', async () => {
    const r = await s.client.completions.create({ model: 'test-gemini', prompt: 'penalised', max_tokens: 30, seed: 7, frequency_penalty: 0.5, presence_penalty: -0.25 });
    expect(r.choices[0].text).to.include('penalised');
    expect((env().sim.log.entries[0].body as { generationConfig: unknown }).generationConfig).to.deep.equal({ maxOutputTokens: 30, seed: 7, frequencyPenalty: 0.5, presencePenalty: -0.25 });
  });

  it('Bedrock: a non-zero penalty is refused 400 unsupported_parameter naming it, before any upstream call or billing (it was dropped)', async () => {
    const before = await s.billed();
    for (const field of ['frequency_penalty', 'presence_penalty']) {
      for (const stream of [false, true]) {
        const err = await refusal(s.client.completions.create(loose({ model: 'sim-bedrock-claude', prompt: 'x', stream, [field]: 1 })));
        expect(err, `${field} stream=${stream}`).to.be.instanceOf(OpenAI.BadRequestError);
        expect(err!.error).to.include({ code: 'unsupported_parameter', type: 'invalid_request_error', param: field });
      }
    }
    expect(env().sim.log.entries, 'no upstream call').to.have.length(0);
    expect(await s.billed()).to.equal(before);
    // a zero penalty changes nothing and is served
    const r = await s.client.completions.create({ model: 'sim-bedrock-claude', prompt: 'zero penalty', max_tokens: 20, frequency_penalty: 0 });
    expect(r.choices[0].text).to.include('zero penalty');
  });
});
