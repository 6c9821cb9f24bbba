import { refusal } from "../../platform/Refusal.ts"

/** A tracking token that names no message or link (forged, tampered or of a deleted message). */
export class LinkNotFound extends refusal("NotFound", "LinkNotFound", (_: {}) => "Link not found") {}
