import { expect } from 'chai';
import { ApiError } from '../../../shared/errors/ApiError';
import { canonicalToMessages, refuseUntranslatable as messagesRefuses } from '../../../workers/providers/anthropic/to-messages';
import { canonicalToGemini } from '../../../workers/providers/gemini/to-gemini';
import { refuseUntranslatable as geminiRefuses } from '../../../workers/providers/gemini/refuse';
import { canonicalToConverse, refuseUntranslatable as converseRefuses } from '../../../workers/providers/bedrock/to-converse';
import { refuseFileUrls } from '../../../workers/providers/openai/refuse';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const PARTS: Array<[string, unknown]> = [
  ['text', { type: 'text', text: 'hi' }],
  ['image by data URL', { type: 'image_url', image_url: { url: PNG } }],
  ['image by https URL', { type: 'image_url', image_url: 'https://example.com/cat.png' }],
  ['file with file_data', { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }],
  ['file by id', { type: 'file', file: { file_id: 'file-abc' } }],
  ['input_audio', { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }],
  ['an unknown part type', { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } }],
  ['a null part', null],
  ['file by https URL', { type: 'file', file: { filename: 'a.pdf', file_data: 'https://example.com/a.pdf' } }],
];

/** What a call threw: an ApiError's status, code, param and message; the error's name otherwise; null when it threw nothing. */
function refusal(fn: () => unknown): unknown {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof ApiError ? { status: e.status, code: e.code, param: e.param, message: e.message } : (e as Error).name;
  }
}

/**
 * Routing leaves out a deployment whose adapter's refuseUntranslatable throws (api/dispatch/route.ts):
 * for every content part, in a user and in an assistant message, that check refuses exactly what the
 * translation refuses, with the same answer, so that a mixed pool never draws a deployment that answers 400.
 */
describe('adapters: the routing check of content parts refuses exactly what the translation refuses', () => {
  const adapters: Array<[string, (b: Record<string, unknown>) => unknown, (b: Record<string, unknown>) => void]> = [
    ['Anthropic', (b) => canonicalToMessages(b, 'claude-x'), messagesRefuses],
    ['Gemini', canonicalToGemini, geminiRefuses],
    ['Bedrock', (b) => canonicalToConverse(b, 'amazon.nova-pro-v1:0'), (b) => converseRefuses(b, 'amazon.nova-pro-v1:0')],
  ];
  for (const [adapter, translate, refuses] of adapters) {
    it(`${adapter}: every part type, in user and assistant messages`, () => {
      let refused = 0;
      for (const [what, part] of PARTS) {
        for (const role of ['user', 'assistant']) {
          const body = { messages: [{ role: 'user', content: 'first' }, { role, content: [{ type: 'text', text: 'see' }, part] }] };
          const asTranslated = refusal(() => translate(body));
          expect(refusal(() => refuses(body)), `${what} in a ${role} message`).to.deep.equal(asTranslated);
          if (asTranslated !== null) refused++;
        }
      }
      expect(refused, 'some parts are refused (input_audio at least)').to.be.at.least(2);
    });
  }

  it('Gemini and Anthropic refuse an input_audio part with 400 invalid_request naming its type', () => {
    const body = { messages: [{ role: 'user', content: [PARTS[5][1]] }] };
    for (const refuses of [messagesRefuses, geminiRefuses]) {
      expect(refusal(() => refuses(body))).to.deep.equal({ status: 400, code: 'invalid_request', param: undefined, message: "Content part type 'input_audio' is not supported on this model." });
    }
  });

  it('a file whose file_data is an https URL: the Anthropic adapter takes it (a url document), the OpenAI-compatible, Gemini and Bedrock ones refuse it', () => {
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'summarise' }, PARTS[8][1]] }] };
    expect(refusal(() => messagesRefuses(body))).to.equal(null);
    expect(refusal(() => refuseFileUrls(body))).to.deep.equal({
      status: 400,
      code: 'unsupported_parameter',
      param: 'messages[0].content[1]',
      message: '`messages[0].content[1]`: a document by URL is not supported on this model; send its bytes as base64 data.',
    });
    expect(refusal(() => geminiRefuses(body))).to.have.property('code', 'unsupported_parameter');
    expect(refusal(() => converseRefuses(body, 'amazon.nova-pro-v1:0'))).to.have.property('status', 400);
  });
});
