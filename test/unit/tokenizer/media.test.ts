import { expect } from 'chai';
import { DOCUMENT_TOKENS, IMAGE_TOKENS, jsonWithoutMedia, mediaTokens } from '../../../shared/tokenizer/media';
import { wav } from '../../helpers/audio-clips';

describe('tokenizer: media in a request counted at an estimate, never its base64', () => {
  const big = 'A'.repeat(40_000); // 30,000 bytes once decoded

  it('small JSON without media is returned as JSON.stringify writes it; small JSON with a part by URL still counts its estimate', () => {
    const text = [{ role: 'user', content: [{ type: 'text', text: 'an image_url, a document' }] }];
    expect(jsonWithoutMedia(text)).to.deep.equal({ json: JSON.stringify(text), fixedTokens: 0, unsized: 0, audioTokens: 0 });
    const byUrl = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }];
    expect(jsonWithoutMedia(byUrl)).to.deep.equal({ json: JSON.stringify(byUrl), fixedTokens: IMAGE_TOKENS + DOCUMENT_TOKENS, unsized: 1, audioTokens: 0 }); // the document by URL: its size is the upstream's to see
  });

  it('leaves out the payloads of images and binary documents of every dialect, and keeps every other field', () => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${big}`, detail: 'high' } }, { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${big}` } }] },
      { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: big } }, { type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }] },
      { role: 'user', content: [{ type: 'document', title: 'Report', context: 'quarterly figures', source: { type: 'base64', media_type: 'application/pdf', data: big } }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }] },
    ];
    const { json, fixedTokens } = jsonWithoutMedia(messages);
    expect(fixedTokens).to.equal(3 * IMAGE_TOKENS + 2 * Math.max(DOCUMENT_TOKENS, Math.ceil(30_000 / 16)));
    expect(json).to.not.include(big);
    for (const kept of ['"look"', '"notes"', 'tool_use_id', '"high"', '"a.pdf"', '"Report"', '"quarterly figures"', 'data:image/png;base64,', 'https://x/y.png']) expect(json).to.include(kept);
  });

  it('a document reserves by its size: a 1 MB PDF is far more than one image', () => {
    const pdf = 'A'.repeat(1_398_104); // about 1 MiB decoded
    const { fixedTokens } = jsonWithoutMedia([{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }] }]);
    expect(fixedTokens).to.equal(Math.ceil(Math.floor((pdf.length * 3) / 4) / 16));
  });

  it('a media type a client adds to text hides none of it (only payloads are left out)', () => {
    const words = 'word '.repeat(10_000);
    const disguised = [
      { role: 'user', type: 'image_url', content: words },
      { role: 'user', content: [{ type: 'image_url', text: words }] },
      { role: 'user', content: [{ type: 'document', context: words, source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }] },
    ];
    const { json } = jsonWithoutMedia(disguised);
    expect(json.split(words).length - 1, 'every copy of the text is still counted').to.equal(3);
  });

  it('an input_audio clip is its duration in audio tokens, not its base64 text; chat and both Responses shapes; small JSON with one takes the second pass', () => {
    const clip = wav(10); // 320,044 bytes of 16 kHz 16-bit mono: over 50,000 tokens as text, 100 audio tokens
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'what is said?' }, { type: 'input_audio', input_audio: { data: clip, format: 'wav' } }] },
      { role: 'user', content: [{ type: 'input_audio', data: clip, format: 'wav' }] }, // the Responses part's first shape
    ];
    const r = jsonWithoutMedia(messages);
    expect(r).to.include({ fixedTokens: 200, audioTokens: 200, unsized: 0 });
    expect(r.json).to.not.include(clip.slice(0, 100));
    for (const kept of ['"what is said?"', '"format":"wav"', '"input_audio"']) expect(r.json).to.include(kept);
    const small = [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: wav(0.25), format: 'wav' } }] }];
    expect(JSON.stringify(small).length).to.be.below(16_384);
    expect(jsonWithoutMedia(small)).to.include({ fixedTokens: 3, audioTokens: 3 }); // 2.5 tokens, whole tokens up
    expect(mediaTokens({ type: 'input_audio', input_audio: { data: clip, format: 'wav' } })).to.equal(100);
    expect(jsonWithoutMedia([{ role: 'user', content: [{ type: 'input_audio', input_audio: { format: 'wav' } }, { type: 'input_audio', input_audio: 5 }] }]), 'no payload: nothing to take out').to.include({ fixedTokens: 0, audioTokens: 0 });
  });

  it('images and their keys keep their order (a copy without the payload, nothing else moved)', () => {
    const parts = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] }];
    expect(jsonWithoutMedia(parts).json).to.equal(JSON.stringify([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,', detail: 'low' } }] }]));
  });
});
