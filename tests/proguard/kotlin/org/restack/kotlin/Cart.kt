package org.restack.kotlin

// A shopping cart: property accessors with bodies, the stdlib's inline require/check/forEach/
// also/apply/sumOf, a companion with @JvmStatic, @JvmOverloads and default arguments.
data class Item(val sku: String, val price: Long, val quantity: Int = 1)

class Cart(val owner: String) {
  private val items = mutableListOf<Item>()

  var discountPercent: Int = 0
    set(value) {
      require(value in 0..90) { "discount of $value% for $owner is out of range" }
      field = value
    }

  val total: Long
    get() {
      check(items.isNotEmpty()) { "the cart of $owner is empty" }
      return items.sumOf { it.price * it.quantity } * (100 - discountPercent) / 100
    }

  fun add(item: Item): Cart = apply { items += item }

  fun itemAt(index: Int): Item = items[index]

  fun lines(): List<Item> = items.toList()

  @JvmOverloads
  fun addAll(skus: List<String>, price: Long = 100, quantity: Int = 1) {
    skus.forEach { sku -> add(Item(sku, price, quantity).also { validate(it) }) }
  }

  companion object {
    @JvmStatic
    fun parseLine(line: String): Item {
      val parts = line.split(',')
      return Item(parts[0], parts[1].toLong(), parts.getOrNull(2)?.toInt() ?: 1)
    }

    fun empty(owner: String): Cart = Cart(owner)
  }
}

private fun validate(item: Item) {
  if (item.quantity <= 0) throw IllegalArgumentException("the quantity of ${item.sku} must be positive")
}
