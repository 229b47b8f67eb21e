import { expect } from 'chai';
import { DOCUMENT_TOKENS, IMAGE_TOKENS, jsonWithoutMedia } from '../../../shared/tokenizer/media';

describe('tokenizer: media in a request counted at a fixed estimate', () => {
  const big = 'A'.repeat(40_000);

  it('small JSON is returned as JSON.stringify writes it, media and all', () => {
    const messages = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }];
    expect(jsonWithoutMedia(messages)).to.deep.equal({ json: JSON.stringify(messages), fixedTokens: 0 });
  });

  it('leaves out images and binary documents of every dialect, a fixed estimate each, and keeps text documents', () => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${big}` } }, { type: 'file', file: { file_data: `data:application/pdf;base64,${big}` } }] },
      { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: big } }, { type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] },
      { role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: big } }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }] },
    ];
    const { json, fixedTokens } = jsonWithoutMedia(messages);
    expect(fixedTokens).to.equal(3 * IMAGE_TOKENS + 2 * DOCUMENT_TOKENS);
    expect(json).to.not.include(big);
    expect(json).to.include('"look"').and.include('"notes"').and.include('tool_use_id');
  });
});
