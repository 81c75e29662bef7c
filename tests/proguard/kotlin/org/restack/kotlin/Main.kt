package org.restack.kotlin

import java.io.IOException
import kotlinx.coroutines.runBlocking

// Driver of the Kotlin program of the Java accuracy corpus (tests/proguard/accuracy_corpus_test.cc):
// a small shop app written with the Kotlin idioms Android apps use (inline functions and their
// lambdas, coroutines, flows, extension functions, companions, data/sealed/enum classes, delegates,
// SAM conversions), compiled by kotlinc and obfuscated together with kotlin-stdlib and
// kotlinx-coroutines-core as an app ships them. Every scenario throws from inside that code, and
// the trace is printed after a "=== scenario N" line, as the Java driver does.
fun main() {
  scenarios().forEachIndexed { index, scenario ->
    println("=== scenario $index")
    try {
      scenario()
      println("no exception")
    } catch (t: Throwable) {
      t.printStackTrace(System.out)
    }
  }
}

private fun scenarios(): List<() -> Unit> = listOf(
    // Cart.kt: property setter and getter bodies, require/check, companion, @JvmStatic,
    // @JvmOverloads with named and default arguments, List index, extension functions.
    { Cart("ann").discountPercent = 95 },
    { println(Cart("bob").total) },
    { Cart.parseLine("apple,12x") },
    { Cart("cy").addAll(listOf("pear", "plum"), quantity = 0) },
    { println(Cart.empty("dee").add(Item("fig", 300)).itemAt(3)) },
    { println(Cart("eve").add(Item("kiwi", 120)).checkout(coupon = "BOGUS")) },
    { println(Cart("fay").isBig) },
    // Parsing.kt (@file:JvmName("Configs")): sealed classes and when, enum valueOf, lateinit,
    // lazy, !!, as, error(), TODO().
    { println(describe(Token.End)) },
    { println(parseMode("fast")) },
    { println(Settings().path.length) },
    { println(Settings().cacheSize) },
    { println(tokenize("host=example.org;port")) },
    { println(Settings().port(mapOf("port" to "8080"))) },
    { Settings().loadYaml("a: 1") },
    // Repository.kt: coroutines.
    { runBlocking { UserRepository(UserApi()).loadUser(-1) } },
    { runBlocking { println(UserRepository(UserApi()).loadAll(listOf(1, -2, 3))) } },
    { runBlocking { println(UserRepository(UserApi()).loadOnWorker(-3)) } },
    { runBlocking { UserRepository(UserApi()).refreshInBackground(this, listOf(4, -5)) } },
    { runBlocking { println(UserRepository(UserApi()).totalAge(listOf(10, 20, 30))) } },
    { runBlocking { println(UserRepository(UserApi()).retryingStep(-1)) } },
    // Flows.kt: own inline functions with crossinline and noinline lambdas, a cause, a
    // suppressed exception from use.
    { println(downloadWithRetries("https://example.org/catalog")) },
    { scheduled("sync") { Inventory.reserve("pear", 5) }.run() },
    { println(priceOrFallback("12.5.0")) },
    { sendAndClose("payments") },
    // Shapes.kt: bridges, interface default methods, inner and nested classes, anonymous objects,
    // local functions, fun interface SAM conversions, function references, object singletons.
    { dispatchEvent(Click(-1, 4)) },
    { println(Receipt().format(-7)) },
    { println(Order("o-1").Line("sku", 0).unitPrice()) },
    { notifyListeners("checkout") },
    { validateAddress("Main St", "") },
    { println(checkSku("AB")) },
    { println(parsePorts(listOf("80", "http"))) },
    { println(Inventory.reserve("durian", 1)) },
)

internal fun failIo(message: String): Nothing = throw IOException(message)
