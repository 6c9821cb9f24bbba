import { Layer, References, Tracer } from "effect"

/**
 * Counts the SQL statements (the `client` span `effect/sql` opens for each) and transactions (`sql.transaction`
 * spans; each also costs a BEGIN and a COMMIT, or a SAVEPOINT and its release when nested) run while its `layer`
 * provides the tracer; with `byText`, also each statement's text, how often it ran and its total milliseconds.
 */
export const statementCounter = (options: { readonly byText: boolean }) => {
  const counts = { statements: 0, transactions: 0 }
  const texts = new Map<string, { count: number; ms: number }>()
  const tracer = Tracer.make({
    span(spanOptions) {
      const span = new Tracer.NativeSpan(spanOptions)
      if (spanOptions.kind === "client") {
        counts.statements++
        if (options.byText) {
          const attribute = span.attribute.bind(span)
          const end = span.end.bind(span)
          let text = ""
          span.attribute = (key, value) => {
            if (key === "db.query.text") text = String(value).replace(/\s+/g, " ")
            attribute(key, value)
          }
          span.end = (endTime, exit) => {
            const entry = texts.get(text) ?? { count: 0, ms: 0 }
            texts.set(text, { count: entry.count + 1, ms: entry.ms + Number(endTime - spanOptions.startTime) / 1e6 })
            end(endTime, exit)
          }
        }
      } else if (spanOptions.name === "sql.transaction") counts.transactions++
      return span
    }
  })
  const reset = () => {
    counts.statements = 0
    counts.transactions = 0
    texts.clear()
  }
  return { counts, texts, reset, layer: Layer.mergeAll(Layer.succeed(References.TracerEnabled, true), Layer.succeed(Tracer.Tracer, tracer)) }
}
