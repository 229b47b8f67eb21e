import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { translatedCompletionsSuite, TRANSLATED_MODELS } from '../../helpers/translated-completions';

/**
 * `prediction` (OpenAI's Predicted Outputs) only speeds an answer up: the Anthropic and Gemini
 * translations leave it out and answer, but the Bedrock one refused it 400 unsupported_parameter, so
 * a coding agent that sends its file as the prediction failed on a Bedrock model alone. Every
 * translated kind now answers it, JSON and streamed, and sends it nowhere.
 */
describe('prediction on a translated model is a hint, not sent', function () {
  this.timeout(30_000);
  const s = translatedCompletionsSuite();

  it('answers on Anthropic, Gemini and Bedrock models, JSON and streamed, with no prediction in what the upstream got', async () => {
    for (const model of TRANSLATED_MODELS) {
      const prediction = { type: 'content' as const, content: 'const x = 1;' };
      const messages = [{ role: 'user' as const, content: 'rename x to y: const x = 1;' }];
      const json = await s.client.chat.completions.create({ model, messages, prediction });
      expect(json.choices[0].message.content, model).to.be.a('string').and.not.equal('');
      const stream = await s.client.chat.completions.create({ model, messages, prediction, stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text, `${model} streamed`).to.not.equal('');
      const sent = env().sim.log.entries.slice(-2);
      expect(sent, model).to.have.length(2);
      for (const e of sent) expect(JSON.stringify(e.body), model).to.not.include('prediction');
    }
  });
});
