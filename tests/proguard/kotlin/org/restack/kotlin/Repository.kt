package org.restack.kotlin

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.filter
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.coroutines.yield

// A user repository over a suspending API: suspend functions that resume after delay/yield,
// async/awaitAll, withContext on another dispatcher, launch, a Flow, a suspend lambda.
data class User(val id: Int, val name: String, val age: Int)

class UserApi {
  suspend fun fetch(id: Int): User {
    yield()
    if (id < 0) throw IllegalStateException("no user with id $id")
    return User(id, "user$id", 20 + id)
  }
}

class UserRepository(private val api: UserApi) {
  suspend fun loadUser(id: Int): User {
    delay(1)
    return api.fetch(id)
  }

  suspend fun loadAll(ids: List<Int>): List<User> = coroutineScope {
    ids.map { id -> async { loadUser(id) } }.awaitAll()
  }

  suspend fun loadOnWorker(id: Int): User = withContext(Dispatchers.Default) { loadUser(id) }

  fun refreshInBackground(scope: CoroutineScope, ids: List<Int>) {
    for (id in ids) {
      scope.launch {
        val user = loadUser(id)
        println("refreshed ${user.name}")
      }
    }
  }

  private fun ages(ids: List<Int>): Flow<Int> =
      ids.asFlow().map { id -> loadUser(id).age }.filter { age -> age >= 0 }

  suspend fun totalAge(ids: List<Int>): Int {
    var sum = 0
    ages(ids).collect { age ->
      check(age < 45) { "age $age is past the limit after $sum" }
      sum += age
    }
    return sum
  }

  suspend fun retryingStep(id: Int): User {
    val step: suspend (Int) -> User = { attempt ->
      delay(1)
      require(attempt >= 0) { "attempt $attempt is negative" }
      loadUser(attempt)
    }
    return step(id)
  }
}
