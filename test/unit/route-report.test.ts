import { expect } from 'chai';
import { RouteReport } from '../../shared/queues/route-report';
import type { RouteMeta } from '../../shared/queues/route-meta';
import { waitFor } from '../helpers/wait';

const FAR = () => Date.now() + 600_000;
const at = (deployment: string, attempts: number): RouteMeta => ({ deployment, attempts });
const turn = () => new Promise((r) => setTimeout(r, 0));

describe('route report: a long routed job tells its pod where its router stands', () => {
  it('sends nothing for a job that ends before the delay', async () => {
    const sent: RouteMeta[] = [];
    const r = new RouteReport(FAR(), (m) => sent.push(m), 10_000);
    r.note(at('a', 1));
    r.stop();
    r.note(at('b', 2)); // after the end: ignored
    await turn();
    expect(sent).to.deep.equal([]);
  });

  it('sends the latest route once the delay has passed, then every later attempt at once', async () => {
    const sent: RouteMeta[] = [];
    const r = new RouteReport(FAR(), (m) => sent.push(m), 30);
    r.note(at('a', 1));
    r.note(at('b', 2)); // a retry before the delay: its route is the one reported
    expect(sent, 'not before the delay').to.deep.equal([]);
    expect(await waitFor(() => sent.length === 1, 2000, 5)).to.equal(true);
    expect(sent).to.deep.equal([at('b', 2)]);
    r.note(at('c', 3));
    expect(sent, 'a later attempt, at once').to.deep.equal([at('b', 2), at('c', 3)]);
    r.stop();
  });

  it('reports at once when less than the delay is left before the deadline, so the pod has it when its deadline comes', async () => {
    const sent: RouteMeta[] = [];
    const r = new RouteReport(Date.now() + 500, (m) => sent.push(m), 10_000);
    r.note(at('a', 1));
    await turn();
    expect(sent).to.deep.equal([at('a', 1)]);
    r.stop();
  });
});
