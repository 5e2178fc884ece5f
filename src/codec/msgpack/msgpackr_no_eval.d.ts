// Types for msgpackr's decoder built without code generation (package export "msgpackr/unpack-no-eval", which ships
// none): the same Unpackr as the main build's.
declare module "msgpackr/unpack-no-eval" {
  export { Unpackr } from "msgpackr";
}
