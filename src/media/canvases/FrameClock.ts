/**
 * The page's clock under the renderer's control, so that a video's frames
 * are captured frame-exactly whatever the machine's speed. Installed before
 * any of the page's scripts, it replaces `Date`, `performance.now`, timers
 * and `requestAnimationFrame` with a virtual time that moves only when the
 * renderer calls `__frameClock.advanceTo(ms)`: timers due by then run in
 * order, animation-frame callbacks get the frame's time, and every CSS or
 * Web Animation is paused and set to the time since it first appeared.
 * A frame's timers are bounded (an interval of 0 ms cannot spin forever);
 * a script that never returns is stopped by the renderer's time limit.
 */
export const frameClockScript = `(() => {
  const origin = Date.now()
  let now = 0
  const RealDate = Date
  class VirtualDate extends RealDate {
    constructor(...args) { if (args.length === 0) super(origin + now); else super(...args) }
    static now() { return origin + now }
  }
  globalThis.Date = VirtualDate
  const realPerformanceNow = performance.now.bind(performance)
  performance.now = () => now
  const timers = new Map()
  let nextTimer = 1
  const schedule = (callback, delay, args, repeat) => {
    const id = nextTimer++
    const wait = Math.max(0, Number(delay) || 0)
    timers.set(id, { at: now + wait, every: repeat ? Math.max(1, wait) : 0, callback, args })
    return id
  }
  globalThis.setTimeout = (callback, delay, ...args) => schedule(callback, delay, args, false)
  globalThis.setInterval = (callback, delay, ...args) => schedule(callback, delay, args, true)
  globalThis.clearTimeout = globalThis.clearInterval = (id) => { timers.delete(id) }
  const frames = new Map()
  let nextFrame = 1
  globalThis.requestAnimationFrame = (callback) => { const id = nextFrame++; frames.set(id, callback); return id }
  globalThis.cancelAnimationFrame = (id) => { frames.delete(id) }
  const call = (callback, args) => {
    try { typeof callback === "function" ? callback(...args) : (0, eval)(String(callback)) } catch (error) { console.error(error) }
  }
  const firstSeen = new WeakMap()
  const advanceTo = (target) => {
    for (let budget = 10000; budget > 0; budget--) {
      let due
      for (const [id, timer] of timers) if (timer.at <= target && (due === undefined || timer.at < due[1].at)) due = [id, timer]
      if (due === undefined) break
      const [id, timer] = due
      now = timer.at
      if (timer.every > 0) timer.at += timer.every; else timers.delete(id)
      call(timer.callback, timer.args)
    }
    now = target
    const callbacks = [...frames.values()]
    frames.clear()
    for (const callback of callbacks) call(callback, [now])
    for (const animation of document.getAnimations()) {
      if (!firstSeen.has(animation)) firstSeen.set(animation, now)
      animation.pause()
      animation.currentTime = now - firstSeen.get(animation)
    }
    return realPerformanceNow()
  }
  Object.defineProperty(globalThis, "__frameClock", { value: Object.freeze({ advanceTo }) })
})()`
