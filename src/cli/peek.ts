/**
 * Looking at the first bytes of a stream without losing them: how the CLI tells a capture from a bare body.
 *
 * @module
 */

/** Reads until at least `n` bytes (or the end) are seen; returns them and a stream that still yields every byte. */
export async function peek(
  stream: ReadableStream<Uint8Array>,
  n: number,
): Promise<{ head: Uint8Array; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const seen: Uint8Array[] = [];
  let size = 0;
  let done = false;
  while (size < n) {
    const result = await reader.read();
    if (result.done) {
      done = true;
      break;
    }
    seen.push(result.value);
    size += result.value.length;
  }
  const head = new Uint8Array(Math.min(size, n));
  let at = 0;
  for (const chunk of seen) {
    if (at === head.length) break;
    const take = chunk.subarray(0, head.length - at);
    head.set(take, at);
    at += take.length;
  }
  let replay = 0;
  const rest = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (replay < seen.length) {
        controller.enqueue(seen[replay++]);
        return;
      }
      if (done) {
        controller.close();
        return;
      }
      const result = await reader.read();
      if (result.done) controller.close();
      else controller.enqueue(result.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { head, stream: rest };
}
