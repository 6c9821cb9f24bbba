import { refusal } from "../../platform/Refusal.ts"

/** What a caller reads about a model name the catalog cannot route. */
export const unknownModelMessage = (model: string) =>
  `Unknown model "${model}": GET /api/v0/models lists the available models`

/** A model name the catalog cannot route. */
export class UnknownModel extends refusal("Invalid", "UnknownModel", ({ model }: { readonly model: string }) => unknownModelMessage(model)) {}
