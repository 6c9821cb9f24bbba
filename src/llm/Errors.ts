import { refusal } from "../platform/Refusal.ts"
import { unknownModelMessage } from "./Catalog.ts"

/** A model name the catalog cannot route. */
export class UnknownModel extends refusal("Invalid", "UnknownModel", ({ model }: { readonly model: string }) => unknownModelMessage(model)) {}
