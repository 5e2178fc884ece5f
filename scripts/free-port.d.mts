/** A port free on 127.0.0.1 now: the system picks it for a listener that is closed at once. */
export function freePort(): Promise<number>;
