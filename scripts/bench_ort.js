// ONNX Runtime's side of scripts/bench_ort.py: one session, runs on request, times session.run.
//
//   node scripts/bench_ort.js ORT_PREFIX MODEL.onnx THREADS
//
// ORT_PREFIX is the npm prefix holding node_modules/onnxruntime-node. Reads one JSON request a
// line on stdin: {"ids": [...], "dump": "PATH" or null}; answers one JSON line on stdout:
// {"ms": time of session.run}. With "dump", the outputs are written as raw float32 files
// PATH.logits.f32 and PATH.attentions.f32 (C order; their dims are in the answer).

'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

async function main() {
  const [prefix, modelPath, threadsText] = process.argv.slice(2);
  const ort = require(path.resolve(prefix, 'node_modules', 'onnxruntime-node'));
  const threads = parseInt(threadsText, 10);
  const session = await ort.InferenceSession.create(modelPath, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    const ids = BigInt64Array.from(request.ids.map(BigInt));
    const feeds = { input_ids: new ort.Tensor('int64', ids, [1, ids.length]) };
    const start = process.hrtime.bigint();
    const outputs = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const answer = { ms };
    if (request.dump) {
      for (const name of ['logits', 'attentions']) {
        const t = outputs[name];
        fs.writeFileSync(`${request.dump}.${name}.f32`,
                         Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
        answer[name] = t.dims;
      }
    }
    for (const name of Object.keys(outputs)) outputs[name].dispose?.();
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
  await session.release();
}

main().catch((error) => {
  process.stderr.write(`bench_ort.js: ${error.stack || error}\n`);
  process.exit(1);
});
