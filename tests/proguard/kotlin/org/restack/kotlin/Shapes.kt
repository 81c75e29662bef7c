package org.restack.kotlin

// Events and formatting: a generic class whose override takes a more specific type (a bridge
// method), an interface method with a body, inner and nested classes, an anonymous object, a local
// function, fun interface SAM conversions, function references, an object singleton.
abstract class Handler<T> {
  abstract fun handle(event: T): String
}

data class Click(val x: Int, val y: Int)

class ClickHandler : Handler<Click>() {
  override fun handle(event: Click): String {
    require(event.x >= 0) { "click outside the window at $event" }
    return "clicked ${event.x},${event.y}"
  }
}

fun <T> dispatch(handler: Handler<T>, event: T): String = handler.handle(event)

fun dispatchEvent(click: Click) {
  println(dispatch(ClickHandler(), click))
}

interface Formatter {
  fun format(amount: Int): String {
    if (amount < 0) throw IllegalArgumentException("negative amount $amount")
    return "$amount.00"
  }
}

class Receipt : Formatter

class Order(val id: String) {
  inner class Line(val sku: String, val quantity: Int) {
    fun unitPrice(): Long = run { Pricing.total(sku) / quantity }
  }

  class Pricing {
    companion object {
      fun total(sku: String): Long = sku.length * 100L
    }
  }
}

interface EventListener {
  fun onEvent(name: String)
}

fun notifyListeners(event: String) {
  val listeners = listOf(
      object : EventListener {
        override fun onEvent(name: String) = println("logged $name")
      },
      object : EventListener {
        override fun onEvent(name: String) {
          if (name == "checkout") throw UnsupportedOperationException("no handler for $name")
        }
      })
  listeners.forEach { it.onEvent(event) }
}

fun validateAddress(street: String, city: String) {
  fun field(name: String, value: String) {
    if (value.isBlank()) throw IllegalArgumentException("$name is blank")
  }
  field("street", street)
  field("city", city)
}

fun interface SkuRule {
  fun accepts(sku: String): Boolean
}

private val rules = listOf(SkuRule { it.isNotEmpty() }, SkuRule { sku -> sku.length > 2 || error("sku $sku is too short") })

fun checkSku(sku: String): Boolean = rules.all { it.accepts(sku) }

private fun parsePort(text: String): Int = text.toInt()

fun parsePorts(texts: List<String>): List<Int> {
  val parse: (String) -> Int = ::parsePort
  return texts.map(parse)
}

object Inventory {
  private val stock = mutableMapOf("pear" to 3, "plum" to 8)

  fun reserve(sku: String, count: Int): Int {
    val left = stock[sku] ?: throw NoSuchElementException("$sku is not stocked")
    check(left >= count) { "only $left of $sku left, $count wanted" }
    stock[sku] = left - count
    return left - count
  }
}
