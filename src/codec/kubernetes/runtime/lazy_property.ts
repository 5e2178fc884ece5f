/**
 * The pieces of the own properties that metadata mode decodes on first read (ObjectMeta's collections,
 * `managedFields[].fieldsV1`). Internal.
 *
 * Such a property is an own enumerable accessor whose value is kept, once decoded or assigned, in a private field of
 * the object: so `JSON.stringify`, spreading, `structuredClone` and deep equality see the value the full decoding
 * gives, the object keeps its fast properties (turning an accessor into a data property makes the object a
 * dictionary, whose reads are slower), and a frozen object still reads.
 * Kept: metadata mode's decode, informer, memory rows (bench/RESULTS.md §11, "What each optimisation mechanism buys").
 *
 * @module
 */
import { emptyList } from "../../value_constructors.ts";

/** Returns the object it is given from its constructor, so that a subclass's private fields go onto that object. */
class Identity {
  constructor(target: object) {
    return target;
  }
}

/** A value attached to objects by {@linkcode privateSlot}. */
export interface PrivateSlot<T> {
  /** Attaches `value` to `target` (once per object). */
  attach(target: object, value: T): void;
  /** The value attached to `target`, if any. */
  of(target: object): T | undefined;
}

/**
 * A private field that can be put on any object (each call makes a field of its own): invisible to keys,
 * `JSON.stringify`, spreading, `structuredClone` and deep equality, and the object's prototype stays what it was.
 * Cheaper than a `WeakMap` entry, which also costs the garbage collector an ephemeron per object.
 * Kept: metadata mode's decode rows (bench/RESULTS.md §11, "What each optimisation mechanism buys").
 */
export function privateSlot<T>(): PrivateSlot<T> {
  class Slot extends Identity {
    #value: T;

    constructor(target: object, value: T) {
      super(target);
      this.#value = value;
    }

    static of(target: object): T | undefined {
      return #value in target ? (target as Slot).#value : undefined;
    }
  }
  return {
    attach(target, value) {
      new Slot(target, value);
    },
    of: Slot.of,
  };
}

/** The values of an object's lazy properties, read or assigned so far: `values[i]` once bit `i` of `known` is set. */
export interface LazyValues {
  known: number;
  values: unknown[] | undefined;
}

/**
 * The accessor pair of lazy property `name`, the `i`-th of the objects that carry their state in `slot`: `compute` gives
 * its value on the first read (a fault is thrown at every read, nothing being kept); the value read or assigned is kept
 * in the state. Made once per property and shared by every object, so that objects get no closures of their own and V8
 * shares their shapes.
 */
export function lazyDescriptor<S extends LazyValues>(
  slot: PrivateSlot<S>,
  name: string,
  i: number,
  compute: (state: S) => unknown,
): PropertyDescriptor {
  const bit = 1 << i;
  return {
    get(this: object) {
      const state = stateOf(slot, this, name);
      if ((state.known & bit) !== 0) return state.values![i];
      const value = compute(state);
      (state.values ??= emptyList())[i] = value;
      state.known |= bit;
      return value;
    },
    set(this: object, value: unknown) {
      // Read-only once frozen, as a data property is (assigning to one throws in strict code, which modules are).
      if (Object.isFrozen(this)) {
        throw new TypeError(`Cannot assign to read only property '${name}' of a frozen object`);
      }
      const state = stateOf(slot, this, name);
      (state.values ??= emptyList())[i] = value;
      state.known |= bit;
    },
    enumerable: true,
    configurable: true,
  };
}

/**
 * The state `slot` holds for the lazy property `name` of `target`. A lazy property's accessor runs with `this` set to
 * whatever it was read through: a Proxy of the object (Vue's `reactive`, MobX) does not carry the object's private
 * fields, so that case throws a TypeError that says what to do instead.
 */
function stateOf<T>(slot: PrivateSlot<T>, target: object, name: string): T {
  const state = slot.of(target);
  if (state === undefined) {
    throw new TypeError(
      `'${name}' of a metadata-mode object decodes on first read from state the object itself holds, which a Proxy ` +
        "of it (or another object) does not reach: give a Proxy-based store a plain copy, structuredClone(metadata)",
    );
  }
  return state;
}
