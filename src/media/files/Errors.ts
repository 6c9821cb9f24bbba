import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** An upload that is not a usable image; the message names why. */
export class InvalidImage extends plainRefusal("Invalid", "InvalidImage") {}

/** No file with this id and name. */
export class FileNotFound extends refusal("NotFound", "FileNotFound", (_: {}) => "File not found") {}
