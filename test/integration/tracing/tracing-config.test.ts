import { expect } from 'chai';
import { runToEnd } from '../../helpers/process';
import { freePort } from '../../../scripts/services/free-port';

describe('tracing: a configuration the gateway cannot export with is refused at start, in one line', function () {
  this.timeout(60_000);

  it('OTEL_EXPORTER_OTLP_PROTOCOL=grpc: the web and worker processes exit 1 naming the variable and what is supported', async () => {
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
    const web = await runToEnd('api/server.js', [], { ...otel, PORT: String(await freePort()) });
    const workers = await runToEnd('workers/main.js', ['chat'], otel);
    for (const [name, r] of [['web', web], ['workers', workers]] as const) {
      expect(r.code, r.stderr).to.equal(1);
      expect(r.lines, r.stderr).to.have.length(1);
      expect(r.lines[0]).to.equal(`${name} cannot start: OTEL_EXPORTER_OTLP_PROTOCOL 'grpc' is not supported: use http/protobuf or http/json`);
      expect(r.stderr).not.to.match(/\n\s+at /);
    }
  });
});
