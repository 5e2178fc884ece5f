/**
 * The pieces of the own properties that metadata mode decodes on first read (ObjectMeta's collections,
 * `managedFields[].fieldsV1`). Internal.
 *
 * Such a property is an own enumerable accessor whose value is kept, once decoded or assigned, in a private field of
 * the object: so `JSON.stringify`, spreading, `structuredClone` and deep equality see the value the full decoding
 * gives, the object keeps V8's fast properties (turning an accessor into a data property makes it a dictionary, whose
 * reads are several times slower), and a frozen object still reads.
 *
 * @module
 */

/** Returns the object it is given from its constructor, so that a subclass's private fields go onto that object. */
export class Identity {
  constructor(target: object) {
    return target;
  }
}

/**
 * Checks that `name` may be assigned on `object`, as for a data property: a frozen object's properties are read-only,
 * and assigning to one throws (as it does in strict code, which modules are).
 */
export function checkAssignable(object: object, name: string): void {
  if (Object.isFrozen(object)) {
    throw new TypeError(`Cannot assign to read only property '${name}' of a frozen object`);
  }
}
