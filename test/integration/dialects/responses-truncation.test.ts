import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { Model } from '../../../shared/db/models';
import { upsertModel } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { expectOpenAI, withoutNullUser } from '../../helpers/conformance';

const SMALL = 'test-small-context';
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
/** The user messages the upstream was last sent. */
const sentUsers = () => (env().sim.log.entries.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'user').map((m) => m.content.split(' ')[0]);

/** OpenAI's `truncation: "auto"` on the responses dialect (api/routes/responses/truncation.ts). */
describe('responses truncation', () => {
  const s = openaiOrg();
  before(async () => {
    await upsertModel({ id: SMALL, provider: 'simulator', upstream: 'sim-chat-1', capabilities: { chat: true }, context_window: 900, prices: { input_token: 0.5, output_token: 1.5 } });
    await bumpEpoch(env().redis);
  });
  after(async () => {
    await Model.destroy({ where: { publicId: SMALL } });
    await bumpEpoch(env().redis);
  });

  it('auto drops whole turns from the beginning until the input and max_output_tokens fit the context window; disabled sends all; the last turn is always kept', async () => {
    const r1 = await s.c.responses.create({ model: SMALL, input: words('alpha', 150), max_output_tokens: 16 });
    const r2 = await s.c.responses.create({ model: SMALL, input: words('beta', 150), previous_response_id: r1.id, max_output_tokens: 16 });
    const r3 = await s.c.responses.create({ model: SMALL, input: words('gamma', 150), previous_response_id: r2.id, max_output_tokens: 16 });

    const all = await s.c.responses.create({ model: SMALL, input: 'delta question', previous_response_id: r3.id, max_output_tokens: 16 });
    expect(all.truncation).to.equal('disabled');
    expect(sentUsers(), 'disabled: every turn').to.deep.equal(['alpha0', 'beta0', 'gamma0', 'delta']);

    const cut = await s.c.responses.create({ model: SMALL, input: 'delta question', previous_response_id: r3.id, max_output_tokens: 16, truncation: 'auto' });
    expect(cut.truncation).to.equal('auto');
    expectOpenAI('Response', withoutNullUser(JSON.parse(JSON.stringify(cut))));
    const kept = sentUsers();
    expect(kept.at(-1), 'the last turn').to.equal('delta');
    expect(kept[0], 'the oldest turn went first').to.not.equal('alpha0');
    expect(kept.length).to.be.below(4);
    const sent = env().sim.log.entries.at(-1)!.body as { messages: Array<{ role: string }> };
    expect(sent.messages[0].role, 'it still opens with a user message').to.equal('user');

    const fits = await s.c.responses.create({ model: SMALL, input: 'short', max_output_tokens: 16, truncation: 'auto' });
    expect(fits.status).to.equal('completed');
    expect(sentUsers()).to.deep.equal(['short']);
    const alone = await s.c.responses.create({ model: SMALL, input: words('huge', 1200), max_output_tokens: 16, truncation: 'auto' });
    expect(alone.status, 'a last turn too long for the window still goes (the upstream decides)').to.be.oneOf(['completed', 'incomplete']);
    expect(sentUsers()).to.deep.equal(['huge0']);
  });

  it("auto cuts a single task's long tool loop (Codex's shape) from its oldest steps, keeping the task, every call with its result and the last step", async () => {
    const steps = [1, 2, 3, 4, 5].flatMap((n) => [
      { type: 'function_call' as const, call_id: `call_${n}`, name: 'shell', arguments: `{"cmd":"step ${n}"}` },
      { type: 'function_call_output' as const, call_id: `call_${n}`, output: words(`out${n}x`, 120) },
    ]);
    const tools = [{ type: 'function' as const, name: 'shell', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } }];
    const input = [{ role: 'user' as const, content: 'task: fix the build' }, ...steps];
    await s.c.responses.create({ model: SMALL, input, tools, max_output_tokens: 16 });
    const whole = env().sim.log.entries.at(-1)!.body as { messages: Array<{ role: string }> };
    expect(whole.messages.filter((m) => m.role === 'tool'), 'disabled: every result').to.have.length(5);

    const cut = await s.c.responses.create({ model: SMALL, input, tools, max_output_tokens: 16, truncation: 'auto' });
    expect(cut.status, 'answered (16 output tokens may end it early)').to.be.oneOf(['completed', 'incomplete']);
    const sent = (env().sim.log.entries.at(-1)!.body as { messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ id: string }>; tool_call_id?: string }> }).messages;
    expect(sent[0], 'the task is kept').to.include({ role: 'user', content: 'task: fix the build' });
    const results = sent.filter((m) => m.role === 'tool');
    const outs = results.map((m) => String(m.content).split('x')[0]);
    expect(outs.at(-1), 'the last step').to.equal('out5');
    expect(outs, 'the oldest steps went first').to.not.include('out1');
    expect(outs.length).to.be.within(1, 4);
    const calls = new Set(sent.flatMap((m) => m.tool_calls ?? []).map((c) => c.id));
    expect(results.every((m) => calls.has(m.tool_call_id!)), 'no result without its call').to.equal(true);
    expect(calls.size, 'no call without its result').to.equal(results.length);
  });

  it('auto: a tool output’s image (view_image) stays with its step, not taken for a turn of the caller’s: the task is kept, the oldest steps go with their images', async () => {
    const VISION = `${SMALL}-vision`;
    await upsertModel({ id: VISION, provider: 'simulator', upstream: 'sim-chat-1', capabilities: { chat: true, vision: true }, context_window: 900, prices: { input_token: 0.5, output_token: 1.5 } });
    await bumpEpoch(env().redis);
    try {
      const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
      const steps = [1, 2, 3, 4, 5].flatMap((n) => [
        { type: 'function_call' as const, call_id: `call_${n}`, name: 'view', arguments: `{"n":${n}}` },
        {
          type: 'function_call_output' as const,
          call_id: `call_${n}`,
          output: n === 2 ? [{ type: 'input_text' as const, text: words(`out${n}x`, 120) }, { type: 'input_image' as const, image_url: png, detail: 'low' as const }] : words(`out${n}x`, 120),
        },
      ]);
      const tools = [{ type: 'function' as const, name: 'view', strict: false, parameters: { type: 'object', properties: { n: { type: 'number' } } } }];
      await s.c.responses.create({ model: VISION, input: [{ role: 'user' as const, content: 'task: look at them' }, ...steps], tools, max_output_tokens: 16, truncation: 'auto' });
      const sent = (env().sim.log.entries.at(-1)!.body as { messages: Array<{ role: string; content: unknown; tool_calls?: Array<{ id: string }>; tool_call_id?: string }> }).messages;
      expect(sent[0], 'the task is kept').to.include({ role: 'user', content: 'task: look at them' });
      const results = sent.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
      expect(results.at(-1)).to.equal('call_5');
      expect(results, 'the oldest steps went first').to.not.include('call_1');
      const images = sent.filter((m) => m.role === 'user' && Array.isArray(m.content));
      expect(images.length, 'the image goes with its step').to.equal(results.includes('call_2') ? 1 : 0);
    } finally {
      await Model.destroy({ where: { publicId: VISION } });
      await bumpEpoch(env().redis);
    }
  });

  it('refuses a truncation it does not know (400 naming it)', async () => {
    const err = await s.c.responses.create({ model: SMALL, input: 'x', truncation: 'middle' as 'auto' }).catch((e: unknown) => e as { status: number; param?: string });
    expect([(err as { status: number }).status, (err as { param?: string }).param]).to.deep.equal([400, 'truncation']);
  });
});
