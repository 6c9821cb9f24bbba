import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useState } from "preact/hooks"

/** What an API call gave: still loading, its value, or its error message; `reload` calls it again. */
export const useLoad = <A,>(load: () => Promise<A>, dependencies: ReadonlyArray<unknown>) => {
  const [state, setState] = useState<{ value?: A; error?: string; loading: boolean }>({ loading: true })
  const reload = useCallback(() => {
    setState((previous) => ({ ...previous, loading: true }))
    load().then(
      (value) => setState({ value, loading: false }),
      (error: Error) => setState({ error: error.message, loading: false })
    )
  }, dependencies)
  useEffect(reload, [reload])
  return { ...state, reload }
}

/** A call's outcome shown to the person: loading, its error (announced), or its content. */
export const Loaded = <A,>(props: { state: { value?: A; error?: string }; children: (value: A) => ComponentChildren }) =>
  props.state.error !== undefined
    ? <p role="alert" class="error">{props.state.error}</p>
    : props.state.value === undefined
    ? <p aria-busy="true">Loading…</p>
    : <>{props.children(props.state.value)}</>

/** Runs an action from a button or form, showing its error next to it. */
export const useAction = () => {
  const [error, setError] = useState<string>()
  const run = (action: () => Promise<unknown>) => {
    setError(undefined)
    action().catch((failure: Error) => setError(failure.message))
  }
  const Failure = () => (error === undefined ? null : <p role="alert" class="error">{error}</p>)
  return { run, Failure }
}

export const Section = (props: { title: string; children: ComponentChildren }) => (
  <section aria-label={props.title}>
    <h2>{props.title}</h2>
    {props.children}
  </section>
)

export const date = (value: string | number | null) => (value === null ? "—" : new Date(value).toLocaleString())

/** A rate (0–1) as a percentage with one decimal. */
export const percent = (rate: number) => `${Math.round(rate * 1000) / 10} %`

/**
 * HTML of the company's or a correspondent's making (a campaign body, a landing page, a received mail): shown in a
 * frame with no scripts, forms or same-origin rights.
 */
export const SandboxedHtml = (props: { title: string; html: string; class?: string }) => (
  <iframe class={props.class ?? "preview"} title={props.title} sandbox="" srcdoc={props.html} />
)

/** A table row's action: a button in its own cell, named for the row it acts on. */
export const RowAction = (props: { name: string; kind: "danger" | "secondary"; onClick: () => void; children: ComponentChildren }) => (
  <td><button type="button" class={props.kind} aria-label={props.name} onClick={props.onClick}>{props.children}</button></td>
)
