package org.restack.kotlin

import java.io.Closeable
import java.io.IOException

// The app's own inline functions (a crossinline and a noinline lambda among them), an exception
// with a cause, and use {} on a Closeable whose close throws too (a suppressed exception).
inline fun <T> retrying(times: Int, action: (attempt: Int) -> T): T {
  var last: IOException? = null
  repeat(times) { attempt ->
    try {
      return action(attempt)
    } catch (e: IOException) {
      last = e
    }
  }
  throw IllegalStateException("gave up after $times attempts", last)
}

inline fun scheduled(name: String, crossinline job: () -> Unit): Runnable = Runnable {
  println("running $name")
  job()
}

inline fun <T> withFallback(noinline fallback: (Exception) -> T, parse: () -> T): T =
    try {
      parse()
    } catch (e: NumberFormatException) {
      fallback(e)
    }

fun downloadWithRetries(url: String): String = retrying(3) { attempt -> failIo("attempt $attempt of $url timed out") }

fun priceOrFallback(text: String): Double =
    withFallback({ e -> throw IllegalArgumentException("no price in '$text'", e) }) { text.toDouble() }

class Connection(private val name: String) : Closeable {
  fun send(message: String) {
    failIo("$name: broken pipe while sending $message")
  }

  override fun close() {
    failIo("$name: close failed")
  }
}

fun sendAndClose(name: String) {
  Connection(name).use { it.send("ping") }
}
