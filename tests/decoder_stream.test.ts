/**
 * DecoderStream's failure contract, with a decoder whose output lags behind its input (as one that hands its work to
 * an asynchronous engine does; the real one is GunzipStream's `native` engine, tested in gunzip_stream.test.ts): the
 * stand-in below holds each input back until the next one comes, which no runtime's decoder does on its own.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DecodeError } from "../mod.ts";
import { DecoderStream, type StreamDecoder } from "../wire.ts";
import { drain, drainSlowly, failingAfter, within } from "./_util.ts";

/** Emits each input string only when the next arrives (or at the end); `salvage` hands on the one held back. */
class LaggingDecoder implements StreamDecoder<string, string> {
  held: string | undefined;
  readonly calls: string[] = [];
  reason: unknown;
  constructor(readonly salvageFault?: DecodeError) {}
  async push(chunk: string, emit: (value: string) => void): Promise<void> {
    await Promise.resolve();
    if (this.held !== undefined) emit(this.held);
    this.held = chunk;
  }
  finish(emit: (value: string) => void): void {
    if (this.held !== undefined) emit(this.held);
  }
  async salvage(emit: (value: string) => void): Promise<void> {
    this.calls.push("salvage");
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.held !== undefined) emit(this.held);
    this.held = undefined;
    if (this.salvageFault) throw this.salvageFault;
  }
  failed(reason: unknown): void {
    this.calls.push("failed");
    this.reason = reason;
  }
}

test("DecoderStream: when the input fails, what salvage still makes of it arrives first, then the input's error", async () => {
  const reason = new DecodeError("TRUNCATED", 42, "the connection ended");
  const decoder = new LaggingDecoder();
  const { values, error } = await within(
    drain(failingAfter(["a", "b", "c"], reason).pipeThrough(new DecoderStream(decoder))),
    2000,
  );
  assert.deepEqual(values, ["a", "b", "c"]);
  assert.equal(error, reason);
  assert.deepEqual(decoder.calls, ["salvage", "failed"]);
  assert.equal(decoder.reason, reason);
});

test("DecoderStream: without salvage, the input's failure is passed on with what was emitted", async () => {
  const reason = new Error("gone");
  const lagging = new LaggingDecoder();
  const decoder: StreamDecoder<string, string> = {
    push: (c, e) => lagging.push(c, e),
    finish: (e) => lagging.finish(e),
  };
  const { values, error } = await within(
    drain(failingAfter(["a", "b", "c"], reason).pipeThrough(new DecoderStream(decoder))),
    2000,
  );
  assert.deepEqual(values, ["a", "b"]); // "c" was still held: this is what salvage is for
  assert.equal(error, reason);
});

test("DecoderStream: a fault salvage finds (in input before the failure) replaces the input's failure", async () => {
  const fault = new DecodeError("DECOMPRESSION_FAILED", 7, "corrupt data");
  const decoder = new LaggingDecoder(fault);
  const { values, error } = await within(
    drain(failingAfter(["a", "b"], new Error("later")).pipeThrough(new DecoderStream(decoder))),
    2000,
  );
  assert.deepEqual(values, ["a", "b"]);
  assert.equal(error, fault);
  assert.deepEqual(decoder.calls, ["salvage", "failed"]);
  assert.equal(decoder.reason, fault);
});

test("DecoderStream: a slow reader still gets the salvaged values, then the error", async () => {
  const reason = new Error("cut");
  const { values, error } = await drainSlowly(
    failingAfter(["a", "b", "c", "d"], reason).pipeThrough(new DecoderStream(new LaggingDecoder())),
    10,
  );
  assert.deepEqual(values, ["a", "b", "c", "d"]);
  assert.equal(error, reason);
});

test("DecoderStream: a stage already failed by its own fault does not salvage", async () => {
  const calls: string[] = [];
  const decoder: StreamDecoder<string, string> = {
    push(chunk, emit) {
      if (chunk === "!") throw new DecodeError("JSON_INVALID", 3, "bad");
      emit(chunk);
    },
    finish() {},
    salvage() {
      calls.push("salvage");
    },
  };
  const { values, error } = await drain(
    failingAfter(["a", "!", "b"], new Error("later")).pipeThrough(new DecoderStream(decoder)),
  );
  assert.deepEqual(values, ["a"]);
  assert.ok(error instanceof DecodeError && error.code === "JSON_INVALID", String(error));
  assert.deepEqual(calls, []);
});
