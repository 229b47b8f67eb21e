import { expect } from 'chai';
import { fetchableUrl } from '../../../api/dispatch/native-search/fetchable';
import type { CanonicalMessage } from '../../../api/dialects/canonical';

describe('fetchableUrl: a fetch only of a URL the conversation gave (Anthropic web fetch)', () => {
  const user = (content: CanonicalMessage['content']): CanonicalMessage => ({ role: 'user', content });
  it('allows a URL in the user text, a text part, a tool result or the system prompt; with or without a trailing slash or fragment', () => {
    expect(fetchableUrl('https://example.com/a', [user('read https://example.com/a please')])).to.equal(true);
    expect(fetchableUrl('https://example.com/', [user([{ type: 'text', text: 'see https://example.com' }])])).to.equal(true);
    expect(fetchableUrl('https://example.com/a#top', [{ role: 'tool', tool_call_id: 't', content: 'result: https://example.com/a' }])).to.equal(true);
    expect(fetchableUrl('https://docs.example.com/x', [{ role: 'system', content: 'Docs: https://docs.example.com/x' }])).to.equal(true);
  });
  it("refuses a URL only the model wrote, one with data added, and an empty one", () => {
    const convo: CanonicalMessage[] = [user('read https://example.com/a'), { role: 'assistant', content: 'I will open https://evil.example/?q=secret' }];
    expect(fetchableUrl('https://evil.example/?q=secret', convo)).to.equal(false);
    expect(fetchableUrl('https://example.com/a?leak=1', convo)).to.equal(false);
    expect(fetchableUrl('', convo)).to.equal(false);
  });
});
