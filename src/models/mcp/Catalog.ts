import type { HttpMethod } from "effect/http"
import type { OpenApi } from "effect/http-api"

/**
 * The MCP capability catalog, derived from the OpenAPI document of the one
 * `HttpApi` at start-up: categories are the API's groups (areas), operations
 * are its endpoints. Nothing here names an area; a new endpoint appears in
 * the catalog by being in the API.
 */

type Json = unknown
type JsonObject = { readonly [key: string]: Json }

export interface Parameter {
  readonly name: string
  readonly required: boolean
  readonly schema: Json
  readonly description?: string | undefined
}

export interface Operation {
  readonly operationId: string
  readonly category: string
  readonly method: HttpMethod.HttpMethod
  /** The path template, e.g. `/api/v0/projects/{project_id}`. */
  readonly path: string
  readonly summary: string
  readonly description: string
  readonly readOnly: boolean
  readonly pathParameters: ReadonlyArray<Parameter>
  readonly queryParameters: ReadonlyArray<Parameter>
  /** The JSON body, when the operation takes one: its schema with every `$ref` resolved. */
  readonly body: { readonly schema: Json; readonly fields: ReadonlyArray<string> | undefined } | undefined
  /** Operations whose body is multipart (file uploads): described, but refused by execution. */
  readonly multipart: boolean
  readonly response: { readonly status: number; readonly contentTypes: ReadonlyArray<string>; readonly schema: Json }
  readonly errors: ReadonlyArray<{ readonly status: number; readonly description: string }>
  /** Words the keyword search matches, lower-cased and stemmed. */
  readonly keywords: ReadonlyMap<string, number>
}

export interface Category {
  readonly name: string
  readonly description: string
  readonly operations: ReadonlyArray<Operation>
}

export interface Catalog {
  readonly categories: ReadonlyArray<Category>
  readonly operations: ReadonlyMap<string, Operation>
}

/** The operator API and the MCP server itself are not actions a model may run. */
export const excludedCategories: ReadonlySet<string> = new Set(["admin", "mcp"])

const methods: ReadonlyArray<readonly [OpenApi.OpenAPISpecMethodName, HttpMethod.HttpMethod]> = [
  ["get", "GET"],
  ["put", "PUT"],
  ["post", "POST"],
  ["delete", "DELETE"],
  ["patch", "PATCH"],
  ["head", "HEAD"],
  ["options", "OPTIONS"],
  ["trace", "TRACE"]
]

const isObject = (value: Json): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A schema with every `#/components/schemas/…` reference inlined. A reference
 * to a schema that is being inlined already (recursion) stays a reference,
 * to `#/$defs/…`, and the definition is added once under `$defs`.
 */
export const resolveRefs = (schema: Json, components: JsonObject): Json => {
  const definitions: Record<string, Json> = {}
  const inline = (node: Json, stack: ReadonlyArray<string>): Json => {
    if (Array.isArray(node)) return node.map((item) => inline(item, stack))
    if (!isObject(node)) return node
    const ref = node["$ref"]
    if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) {
      const name = ref.slice("#/components/schemas/".length)
      const target = components[name]
      if (target === undefined) return node
      if (stack.includes(name)) {
        if (!(name in definitions)) {
          definitions[name] = {}
          definitions[name] = inline(target, [])
        }
        return { $ref: `#/$defs/${name}` }
      }
      return inline(target, [...stack, name])
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, stack)]))
  }
  const resolved = inline(schema, [])
  return Object.keys(definitions).length > 0 && isObject(resolved) ? { ...resolved, $defs: definitions } : resolved
}

/** `companies` → `company`, `projects` → `project`: plural and singular meet in the search. */
const singular = (word: string) => {
  if (word.length <= 3) return word
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`
  return word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word
}

/** `scheduledTasks_listExecutions` → `scheduled task list execution`. */
export const words = (text: string): ReadonlyArray<string> =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1)
    .map(singular)

/** Each word with the weight of the best place it appears in. */
const keywordsOf = (entries: ReadonlyArray<readonly [string, number]>): ReadonlyMap<string, number> => {
  const keywords = new Map<string, number>()
  for (const [text, weight] of entries) {
    for (const word of words(text)) keywords.set(word, Math.max(keywords.get(word) ?? 0, weight))
  }
  return keywords
}

const parameterOf = (parameter: OpenApi.OpenAPISpecParameter, components: JsonObject): Parameter => ({
  name: parameter.name,
  required: parameter.required,
  schema: resolveRefs(parameter.schema, components),
  description: parameter.description
})

const operationOf = (
  method: HttpMethod.HttpMethod,
  path: string,
  spec: OpenApi.OpenAPISpecOperation,
  components: JsonObject
): Operation => {
  const category = spec.tags[0]
  const content = spec.requestBody?.content ?? {}
  const jsonBody = content["application/json"]
  const multipart = "multipart/form-data" in content
  const bodySchema = jsonBody === undefined ? undefined : resolveRefs(jsonBody.schema, components)
  const statuses = Object.keys(spec.responses).map(Number).sort((a, b) => a - b)
  const successStatus = statuses.find((status) => status < 400) ?? 200
  const success = spec.responses[successStatus]
  const successContent = success?.content ?? {}
  const summary = spec.summary ?? `${method} ${path}`
  const description = spec.description ?? ""
  return {
    operationId: spec.operationId,
    category,
    method,
    path,
    summary,
    description,
    readOnly: method === "GET" || method === "HEAD",
    pathParameters: spec.parameters.filter((parameter) => parameter.in === "path").map((p) => parameterOf(p, components)),
    queryParameters: spec.parameters.filter((parameter) => parameter.in === "query").map((p) => parameterOf(p, components)),
    body: bodySchema === undefined
      ? undefined
      : {
        schema: bodySchema,
        fields: isObject(bodySchema) && isObject(bodySchema["properties"]) ? Object.keys(bodySchema["properties"]) : undefined
      },
    multipart,
    response: {
      status: successStatus,
      contentTypes: Object.keys(successContent),
      schema: resolveRefs(successContent["application/json"]?.schema ?? successContent["text/event-stream"]?.schema ?? {}, components)
    },
    errors: statuses.filter((status) => status >= 400).map((status) => ({
      status,
      description: spec.responses[status]?.description ?? ""
    })),
    keywords: keywordsOf([
      [spec.operationId, 4],
      [category, 4],
      [path.replace(/\{[^}]*\}/g, " "), 3],
      [summary, 3],
      [description, 1]
    ])
  }
}

const firstSentence = (text: string) => {
  const end = text.search(/\.(\s|$)/)
  return end === -1 ? text : text.slice(0, end + 1)
}

/** A tag's own description, else what its first operations do. */
const describeCategory = (tag: OpenApi.OpenAPISpecTag | undefined, operations: ReadonlyArray<Operation>) => {
  if (tag?.description !== undefined && tag.description.trim() !== "") return firstSentence(tag.description.trim())
  const names = operations.map((operation) => operation.operationId.slice(operation.category.length + 1))
  return `Operations: ${names.slice(0, 8).join(", ")}${names.length > 8 ? ", …" : ""}.`
}

/** The catalog of an OpenAPI document, without the operator and MCP categories. */
export const fromOpenApi = (spec: OpenApi.OpenAPISpec): Catalog => {
  const components: JsonObject = spec.components.schemas
  const operations: Array<Operation> = []
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [key, method] of methods) {
      const operation = item[key]
      if (operation !== undefined && !excludedCategories.has(operation.tags[0])) {
        operations.push(operationOf(method, path, operation, components))
      }
    }
  }
  const byCategory = new Map<string, Array<Operation>>()
  for (const operation of operations) {
    const list = byCategory.get(operation.category) ?? []
    list.push(operation)
    byCategory.set(operation.category, list)
  }
  const tags = new Map(spec.tags.map((tag) => [tag.name, tag]))
  return {
    categories: [...byCategory].map(([name, list]) => ({ name, description: describeCategory(tags.get(name), list), operations: list })),
    operations: new Map(operations.map((operation) => [operation.operationId, operation]))
  }
}

/**
 * Operations ranked by how well they match the query's keywords: each query
 * word scores the weight of the best place it appears (operation id and
 * category 4, path and summary 3, description 1), a prefix match half of it.
 */
export const search = (operations: ReadonlyArray<Operation>, query: string, limit: number): ReadonlyArray<Operation> => {
  const terms = [...new Set(words(query))]
  if (terms.length === 0) return []
  const scored = operations.flatMap((operation) => {
    let score = 0
    let matched = 0
    for (const term of terms) {
      let best = operation.keywords.get(term) ?? 0
      if (best === 0 && term.length >= 3) {
        for (const [word, weight] of operation.keywords) {
          if (word.startsWith(term) || (word.length >= 3 && term.startsWith(word))) best = Math.max(best, weight / 2)
        }
      }
      if (best > 0) matched++
      score += best
    }
    return score > 0 ? [{ operation, score: score * matched }] : []
  })
  return scored
    .sort((a, b) => b.score - a.score || a.operation.operationId.localeCompare(b.operation.operationId))
    .slice(0, limit)
    .map((entry) => entry.operation)
}
