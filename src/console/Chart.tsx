// First: uPlot reads the browser's language when its module loads (locale.ts says why).
import { formatNumber } from "./locale.ts"
import { useEffect, useRef } from "preact/hooks"
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"

const palette = ["#1f5fbf", "#c0392b", "#1e8449", "#8e44ad", "#b9770e", "#117a8b", "#5d6d7e"]

export interface Series { readonly label: string; readonly values: ReadonlyArray<number> }

/**
 * A time chart (x in seconds since the epoch) with one line per series,
 * named for assistive technology by its title and its series.
 */
export const TimeChart = (props: { title: string; unit: string; x: ReadonlyArray<number>; series: ReadonlyArray<Series> }) => {
  const target = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (target.current === null) return
    const plot = new uPlot({
      width: Math.min(720, target.current.clientWidth || 720),
      height: 240,
      series: [{}, ...props.series.map((series, index) => ({
        label: series.label,
        stroke: palette[index % palette.length],
        width: 2,
        points: { show: true },
        value: (_: uPlot, value: number | null) => (value === null ? "" : formatNumber(value))
      }))],
      axes: [{}, { label: props.unit, values: (_, splits) => splits.map(formatNumber) }]
    }, [[...props.x], ...props.series.map((series) => [...series.values])], target.current)
    return () => plot.destroy()
  }, [props.x, props.series, props.unit])
  return (
    <figure>
      <figcaption>{props.title}</figcaption>
      <div ref={target} role="img" aria-label={`${props.title}: ${props.series.map((s) => s.label).join(", ")}`} />
    </figure>
  )
}
