import { expect } from 'chai';
import { scanMessages } from '../../../api/routes/chat/messages-scan';

/** The one pass over a chat body's parts that the shared-account refusal and the audio price both read (api/routes/chat/messages-scan.ts). */
describe('chat messages scan: the first shared id and the first input_audio part, in one pass', () => {
  const audioPart = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };

  it('finds nothing in a plain body (the same empty result each time, no new object)', () => {
    const body = { messages: [{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'text', text: 'x' }] }] };
    expect(scanMessages(body)).to.deep.equal({});
    expect(scanMessages(body)).to.equal(scanMessages({ messages: 'not a list' }));
  });

  it('the first input_audio part alone', () => {
    expect(scanMessages({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, audioPart, audioPart] }] })).to.deep.equal({ inputAudio: 'messages[0].content[1]' });
  });

  it("stops at the first id: an assistant turn's audio id before its parts, or a part's file id, with the input_audio part seen before it", () => {
    const file = { type: 'file', file: { file_id: 'file-1' } };
    expect(scanMessages({ messages: [{ role: 'user', content: [audioPart, file] }] })).to.deep.equal({ sharedId: { kind: 'file', id: 'file-1', param: 'messages[0].content[1].file.file_id' }, inputAudio: 'messages[0].content[0]' });
    expect(scanMessages({ messages: [{ role: 'user', content: [file, audioPart] }] })).to.deep.equal({ sharedId: { kind: 'file', id: 'file-1', param: 'messages[0].content[0].file.file_id' }, inputAudio: undefined });
    expect(scanMessages({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', audio: { id: 'audio_1' }, content: [file] }] }).sharedId).to.deep.equal({ kind: 'audio', id: 'audio_1', param: 'messages[1].audio.id' });
  });
});
