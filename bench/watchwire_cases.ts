/**
 * The watchwire side of the NDJSON benchmarks, shared by ndjson_pipeline and client_node_baseline: the production
 * pipeline (`JsonWatchEventDecoderStream`) over the same reads, consumed with `for await` and with a `reader.read()`
 * loop, and the same decoding in batches (`BatchDecoderStream` of `JsonWatchEventDecoder`: one array of events per
 * read), consumed with `for await`. Each counts the events it saw (the harness checks the count).
 */
import { BatchDecoderStream, JsonWatchEventDecoder, JsonWatchEventDecoderStream } from "../wire.ts";
import { streamOf } from "./data.ts";
import type { Case } from "./harness.ts";

export function watchwireCases(reads: Uint8Array[], expect: number): Case[] {
  return [
    {
      name: "for-await",
      expect,
      run: async () => {
        let n = 0;
        for await (const event of streamOf(reads).pipeThrough(new JsonWatchEventDecoderStream())) {
          if (event.type !== undefined) n++;
        }
        return n;
      },
    },
    {
      name: "reader",
      expect,
      run: async () => {
        const reader = streamOf(reads).pipeThrough(new JsonWatchEventDecoderStream()).getReader();
        let n = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return n;
          if (value.type !== undefined) n++;
        }
      },
    },
    {
      name: "batches",
      expect,
      run: async () => {
        let n = 0;
        for await (const batch of streamOf(reads).pipeThrough(new BatchDecoderStream(new JsonWatchEventDecoder()))) {
          for (const event of batch) if (event.type !== undefined) n++;
        }
        return n;
      },
    },
  ];
}
